# nbgrader's configuration for the Olympus course: copy it into the course directory
# (docs/teaching.md says how), where `nbgrader generate_assignment` finds it.
c = get_config()  # noqa: F821 - nbgrader defines it

# What the student version has in place of each solution region: a stub that says it is
# not implemented yet, which the check cells recognise ("Not implemented yet: fill in ..."),
# the same as in the student's copy ./run.sh makes (olympus_jupyter.teaching.student).
from olympus_jupyter.teaching.student import STUB  # noqa: E402 - the one stub of the course

c.ClearSolutions.code_stub = {"python": STUB}

# A lesson runs its demos before its exercises: give a cell time on a busy 2-core laptop.
c.Execute.timeout = 60
