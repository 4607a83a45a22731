"""The course's exercises: one checker per exercise, grouped by part.

A notebook states an exercise, leaves a cell for the learner's answer (a
function that raises ``NotImplementedError`` until it is written) and ends
with a cell that calls the exercise's checker on that answer. The checker runs
the answer on its cases and prints a verdict; it never raises, so Run All goes
through a notebook whose exercises are not done yet. The solutions notebooks
(``notebooks/solutions_part*.ipynb``) call the same checkers on worked answers
and are run under nbval like the rest of the course, so a checker that stopped
accepting a right answer, or started accepting a stub, fails the tests.

This package is course material, not part of the ``templatestudio`` wheel.
"""
