"""A pytest plugin, loaded first (pyproject.toml): each pytest process skips a 2.4 s import.

nbformat validates notebooks with jsonschema, which imports rfc3987_syntax if it is installed
(JupyterLab's dependencies install it) and builds its grammar on import, only to check the "iri"
string format, which the notebook schema never uses. Without the module jsonschema leaves that
one format unchecked; every notebook is validated as before.
"""

import sys

sys.modules.setdefault("rfc3987_syntax", None)  # None in sys.modules: `import` raises ImportError
