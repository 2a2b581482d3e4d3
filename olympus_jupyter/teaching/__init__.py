"""Teaching: the checks of the course's exercises (``notebooks/``).

A check runs the student's answer through Olympus and either prints why it is
correct or raises :class:`~olympus_jupyter.teaching.checks.NotYet`, whose message
says what is wrong. Raising is what makes the check cells gradable by nbgrader (a
cell that raises scores zero), and in a plain kernel the error shows the message
alone, without a traceback. Nothing here needs nbgrader.
"""
