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


def test_only_the_innermost_chain_of_module_calls_names_the_path():
    """Objects further out calling their attributes (a test runner's, a server's)
    are not the model's modules: a chain broken by a plain call starts anew."""
    # Block.__call__ calls its own helper, which calls self.up: one chain from Model.
    stack = [
        ("Linear.__call__", None),
        ("Block._mlp", "self.up(x)"),
        ("Block.__call__", "self._mlp(x)"),
        ("Model.__call__", "self.blocks[0](x)"),
        ("loss_fn", "model(x)"),
        ("Runner.run", "self.fn(args)"),
        ("Gateway.serve", "self._pool.run(task)"),
    ]
    assert call_path(stack) == "Model/blocks/0/up"
    broken = [("Linear.__call__", None), ("Block.__call__", "self.up(x)"), ("f", "block(x)")]
    outer = [("Pool.run", None), ("Gateway.serve", "self._pool.run(task)")]
    assert call_path(broken + outer) == "Block/up"


def test_frames_outside_the_staged_function_are_not_read():
    """Whoever called the staged function (a notebook, a test runner's objects
    calling their attributes) names no module of the program."""
    from olympus.module_paths import op_module_path
    from olympus.provenance.sources import SourceTable

    source = {
        1: "    return jnp.sum(x)",  # loss, lines 1-2 of m.py
        5: "        return self._pool.run(task)",  # Gateway.serve, outside
        9: "        return loss(x)",  # Pool.run, outside
    }
    table = SourceTable()
    at = table.location(
        [
            ("m.py", 1, 4, 1, 21, "loss"),
            ("m.py", 9, 15, 9, 22, "Pool.run"),
            ("m.py", 5, 15, 5, 35, "Gateway.serve"),
        ]
    )
    read = lambda p, n: source[n]  # noqa: E731
    tables = table.tables()
    assert op_module_path("jit(loss)/reduce_sum", at, tables, read) == "Gateway/_pool"
    assert op_module_path("jit(loss)/reduce_sum", at, tables, read, staged=("m.py", 1, 2)) == ""
