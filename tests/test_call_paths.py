"""Module paths read from call stacks (flax ``nnx``, which pushes no name scopes):
which calls name a module and which do not."""

from olympus.module_paths import call_expression, call_path


def test_a_method_of_a_module_held_in_an_attribute_names_the_attribute():
    assert call_path([("Embed.attend", None), ("Model.decode", "self.embed.attend(h)")]) == (
        "Model/embed"
    )
    assert call_path([("Model.__call__", "self.embed(h)")]) == ""  # one frame: no call


def test_calls_that_are_not_modules_add_nothing():
    # The same object's helper method, a plain function held in an attribute, a
    # closure, a call on something other than self.
    assert call_path([("Model.helper", None), ("Model.__call__", "self.helper(x)")]) == ""
    assert call_path([("dot_general", None), ("Linear.__call__", "self.dot_general(x)")]) == ""
    assert call_path([("f.<locals>.g", None), ("Model.__call__", "self.g(x)")]) == ""
    assert call_path([("Linear.__call__", None), ("Model.__call__", "other.dense(x)")]) == ""
    assert call_path([("Linear.__call__", None), ("loss_fn", "self.dense(x)")]) == ""


def test_indices_keep_constants_and_drop_variables():
    inner = ("Linear.__call__", None)
    assert call_path([inner, ("Model.__call__", "self.layers[2](x)")]) == "Model/layers/2"
    assert call_path([inner, ("Model.__call__", "self.layers[i](x)")]) == "Model/layers"
    assert call_path([inner, ("Model.__call__", "self.heads['q'](x)")]) == "Model/heads/q"


def test_expressions_span_lines_and_count_columns_in_bytes():
    lines = {1: "y = ünï + self.dense(", 2: "    x)"}
    span = (1, len("y = ünï + ".encode()), 2, 6)
    assert call_expression("m.py", span, lambda p, n: lines[n]) == "self.dense(\n    x)"
    assert call_path([("Dense.__call__", None), ("M.__call__", "self.dense(\n    x)")]) == "M/dense"
    assert call_expression("m.py", span, lambda p, n: None) is None


def test_a_span_with_only_its_start_reads_the_call_that_starts_there():
    """XLA keeps no end position in some modules (a sharded program's): the call
    starting at the column, to its closing parenthesis, is the expression."""
    line = {1: "        return x + self.down(jax.nn.gelu(self.up(self.norm2(x))))"}
    column = line[1].index("self.up")
    expression = call_expression("m.py", (1, column, 1, column), lambda p, n: line[n])
    assert expression == "self.up(self.norm2(x))"
    assert call_path([("Linear.__call__", None), ("Block.__call__", expression)]) == "Block/up"
    at_plus = line[1].index("+ self")
    assert call_expression("m.py", (1, at_plus, 1, at_plus), lambda p, n: line[n]) is None
