"""The checks of the course's exercises, one function per exercise, by lesson.

Each takes the student's answer (the function the exercise asks for), runs it on
cases of its own and reads the result with Olympus itself (the stages, the
specialization explanations, the journeys through XLA's passes), never with
string matching of the student's code. It accepts every correct answer, prints
why it is correct, or raises :class:`~olympus_jupyter.teaching.checks.NotYet` that
says what is wrong and why.

In a notebook's check cell::

    from olympus_jupyter.teaching import exercises
    exercises.check_aot_compiled_sum(aot_compiled_sum)

One module per lesson holds its checks (``stages`` for ``01_stages``...); this
package gathers them, so that a check cell reads the same in every lesson.
"""

from olympus_jupyter.teaching.checks import NotYet  # noqa: F401 - what a check raises
from olympus_jupyter.teaching.exercises.stages import *  # noqa: F403
from olympus_jupyter.teaching.exercises.specializations import *  # noqa: F403
from olympus_jupyter.teaching.exercises.passes import *  # noqa: F403
from olympus_jupyter.teaching.exercises.stablehlo import *  # noqa: F403
from olympus_jupyter.teaching.exercises.control_flow import *  # noqa: F403
from olympus_jupyter.teaching.exercises.costs import *  # noqa: F403
from olympus_jupyter.teaching.exercises.sharding import *  # noqa: F403
from olympus_jupyter.teaching.exercises.export import *  # noqa: F403
from olympus_jupyter.teaching.exercises.will_it_fit import *  # noqa: F403
