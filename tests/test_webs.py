"""Numba's SSA at source level (frontend/webs.py): which bindings of a name are one variable. A web joins the
definitions that reach a common use; the lowering gives every web but one a name of its own where it refuses to
rebind a name to a value of another kind. And the shape of the tuple a device function returns
(shapes.tuple_shape), which its callers unpack by."""
import textwrap

import libcst as cst
from translator.frontend.webs import parallel_nodes, split_webs, webs


def fn(src):
    return cst.parse_module(textwrap.dedent(src)).body[0]


def sizes(src, name):
    found = webs(fn(src), name)
    return None if found is None else [len(w) for w in found]


def test_straight_line_rebinding_is_two_webs():
    assert sizes("""
        def k(a, out):
            r = a[0]
            out[0] = r
            r = (1.0, 2.0)
            out[1] = r[0]
        """, "r") == [2, 2]


def test_a_parameter_read_then_rebound_to_its_element():
    assert sizes("""
        def k(x, out):
            i = 0
            x = x[i]
            out[i] = x * x
        """, "x") == [2, 3]  # the parameter and its read; the element and its two reads


def test_a_loop_carried_value_is_one_web():
    # x's value after the body reaches the next iteration's read: the phi Numba types as one variable
    assert sizes("""
        def k(a, n):
            x = a[0]
            for j in range(n):
                a[j] = x
                x = a[j + 1]
        """, "x") == [3]


def test_a_value_rebound_inside_a_loop_and_read_only_there_is_its_own_web():
    assert sizes("""
        def k(a, n):
            x = a
            y = x[0]
            for j in range(n):
                x = a[j]
                a[j] = x * 2
        """, "x") == [2, 2]


def test_branches_joined_by_a_later_read_are_one_web():
    assert sizes("""
        def k(a, c):
            if c:
                x = a
            else:
                x = 1.0
            a[0] = x
        """, "x") == [3]


def test_break_and_continue_carry_their_values_to_where_they_go():
    # the value at `break` (an array) reaches the read after the loop, the one at `continue` the loop's next read:
    # all three definitions meet there, so Numba would have to unify them (and refuse): one web, not split
    assert sizes("""
        def k(a, n):
            x = 0.0
            for j in range(n):
                a[j] = x
                if j > 2:
                    x = 1.0
                    continue
                x = a
                break
            a[0] = x
        """, "x") == [5]


def test_a_name_read_in_a_lambda_is_not_followed():
    assert webs(fn("""
        def k(a):
            x = a
            f = lambda: x
            x = 1.0
        """), "x") is None


def test_attributes_and_keywords_of_the_same_spelling_are_not_reads():
    assert sizes("""
        def k(a, out):
            x = a[0]
            out[0] = x
            x = cuda.threadIdx.x
            y = f(x=1)
        """, "x") == [2, 1]


def test_split_keeps_the_parameter_name_and_the_positions_follow():
    f = fn("""
        def k(x, out):
            x = x[0]
            out[0] = x
        """)
    new, fresh = split_webs(f, "x", {"x_2"})
    assert fresh == ["x_3"]
    code = cst.Module([new]).code
    assert "x_3 = x[0]" in code and "out[0] = x_3" in code and "def k(x, out)" in code
    pairs = dict(parallel_nodes(f, new))
    assert pairs[f] is new and len(pairs) > 10


def test_one_web_is_not_split():
    assert split_webs(fn("""
        def k(a):
            x = a[0]
            a[1] = x
        """), "x", set()) is None


def test_a_tuple_of_tuples_returned_is_shaped_by_every_return_together():
    """shapes.tuple_shape: a parameter returned says nothing of its shape; another return does (a ray tracer's
    `return hit, d, 0` beside `return (x, y), (-d[0], d[1]), 1`). Returns that disagree give no shape."""
    from translator.frontend.shapes import tuple_shape

    assert tuple_shape(fn("""
        def reflect(p, d, wall):
            hit = (p[0] + d[0], p[1] + d[1])
            if hit[0] > wall:
                return (wall, hit[1]), (-d[0], d[1]), 1
            return hit, d, 0
        """)) == ((None, None), (None, None), None)
    assert tuple_shape(fn("""
        def f(p, c):
            if c:
                return (p[0], p[1]), 1
            return (p[0], p[1], p[2]), 0
        """)) is None
    assert tuple_shape(fn("""
        def g(p):
            return p
        """)) is None


def test_a_tuple_from_a_device_function_of_another_module_shapes_a_return():
    """A neutron guide: `vel = plane.reflect(n, vel)` of `import ...geometry.plane as plane`, returned with the
    position: the callee is found by its dotted name (it was taken for a number)."""
    from types import SimpleNamespace

    from translator.frontend.shapes import tuple_shape

    reflect = SimpleNamespace(node=fn("""
        def reflect(n, v):
            return (v[0] - n[0], v[1] - n[1], v[2] - n[2])
        """), scope=None)
    propagate = fn("""
        def propagate(pos, vel, n, hit):
            if hit:
                vel = plane.reflect(n, vel)
                return pos, vel, 1
            return pos, vel, 0
        """)
    assert tuple_shape(propagate, {"plane.reflect": reflect}) == (None, (None, None, None), None)
