"""The course's checker: your own code checked against the chapter's (gpt.py).

    from checker import check_component, compare_models    # components and built models
    from checker.exercises import check_4_1, hint_4_1       # exercises 4.1-4.3
    import checker; checker.set_language("zh")              # feedback in Chinese
"""

from checker.components import check_component, compare_models, review_component, review_models
from checker.feedback import Feedback, set_language

__all__ = ["Feedback", "check_component", "compare_models", "review_component", "review_models",
           "set_language"]
