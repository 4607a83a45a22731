"""Pictures for the course's notebooks, drawn without a plotting library.

Each module draws one kind of picture as SVG (shown by JupyterLab) with a
text form beside it (what nbval compares and what a terminal shows). Course
material, not part of the ``templatestudio`` wheel.
"""
