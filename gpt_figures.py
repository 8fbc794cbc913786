"""Pictures for the course notebooks, drawn by code so they cannot drift from the model.

Not part of the chapter: the notebooks call these functions to draw diagrams and plots, so a
learner reads one line instead of the drawing code. `pip install -e .` makes it importable.
"""
