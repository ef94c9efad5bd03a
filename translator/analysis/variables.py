"""typed webs -> C variables: one per Python name, unless its webs (or the uses of one web) have different types.

Numba gives each SSA version of a name a variable of its own type. numba2cuda keeps one C variable per name
where it can (readable C), one per web where webs differ in type (`v`, `v_2`), and one per type a web's uses
see where a rebinding on one branch makes the uses after the join wider than those before it (`k_i64`, `k`).
"""

from __future__ import annotations

from collections import Counter

from ..ir import nodes as ir
from ..ir import typesys as T
from .dataflow import stmt_exprs, sub_blocks, walk_body, walk_expr


class Variables:
    """Binds every Name of a typed function to its C variable, adding the copies a web of several variables
    needs. Reads the typer's results: the definitions, their webs and the types of both."""

    def __init__(self, fn: ir.Function, defs, web_of: dict, web_types: dict, def_types: dict, converted):
        self.fn = fn
        self.defs = defs
        self.web_of = web_of
        self.web_types = web_types
        self.def_types = def_types
        self.converted = converted
        self.var_of_web: dict[int, ir.Variable] = {}
        self.typed_vars: dict = {}  # (web, type) -> its C variable, in a web whose uses see several types
        self.reached: dict = {}  # see _use_types

    def make(self):
        """One C variable per Python name, unless its webs have different types."""
        by_name: dict[str, list[int]] = {}
        for d, name in enumerate(self.defs.names):
            w = self.web_of[d]
            by_name.setdefault(name, [])
            if w not in by_name[name]:
                by_name[name].append(w)
        taken = {p.name for p in self.fn.params}
        self.reached = self._use_types()
        for w, name in self._loop_local_webs().items():
            # a loop counter used only inside its loop gets its own C variable, declared in the for header
            var = ir.Variable(name, _c_identifier(name, set()), self.web_types.get(w), loop_counter=True)
            self.fn.variables.append(var)
            self.var_of_web[w] = var
            by_name[name].remove(w)
        for name, ws in by_name.items():
            if not ws:
                continue
            types = {self.web_types.get(w) for w in ws}
            param = next((p for p in self.fn.params if p.name == name and p.array is None), None)
            groups = [ws] if len(types) == 1 else [[w] for w in ws]
            for i, group in enumerate(groups):
                c = _c_identifier(name if i == 0 else f"{name}_{i + 1}", taken if not (param and i == 0) else set())
                taken.add(c)
                var = ir.Variable(name, c, self.web_types.get(group[0]))
                if param is not None and any(self.defs.sites[d][0] == "param" and self.web_of[d] in group
                                             for d in range(len(self.defs.sites))):
                    var.is_param = True
                    param.variable = var
                self.fn.variables.append(var)
                for w in group:
                    self.var_of_web[w] = var
                    self._typed_variables(w, var, taken)
        self._bind_names(self.fn.body)
        self._copy_definitions()

    def _use_types(self) -> dict:
        """web -> {def id -> the types of the uses it reaches}, for the webs whose uses see different types."""
        reached: dict = {}
        for n in walk_body(self.fn.body):
            if isinstance(n, ir.Name) and n.defs and n.type is not None:
                for d in n.reach:
                    reached.setdefault(self.web_of[d], {}).setdefault(d, set()).add(n.type)
        # a parameter or a loop counter keeps its web's one type: C declares it where it is made
        fixed = {self.web_of[d] for d, site in enumerate(self.defs.sites) if site[0] in ("param", "for")}
        return {w: by_def for w, by_def in reached.items()
                if w not in fixed and len(set().union(*by_def.values())) > 1}

    def _typed_variables(self, w, var, taken) -> None:
        """A web whose uses see different types (an int rebound to a float on one branch) gets a C variable
        per type: each use reads the one of its type, and each definition writes those of the uses it reaches
        (converted as Numba's phi converts). VAR, the web's own, holds the web's type; the others are named
        after theirs (`k_i64`)."""
        by_def = self.reached.get(w)
        if by_def is None:
            return
        self.typed_vars[(w, var.type)] = var
        for t in sorted(set().union(*by_def.values()) - {var.type}, key=str):
            c = _c_identifier(f"{var.c_name}_{_type_suffix(t)}", taken)
            taken.add(c)
            extra = ir.Variable(var.py_name, c, t)
            self.fn.variables.append(extra)
            self.typed_vars[(w, t)] = extra

    def _written(self, d):
        """(the variable definition D writes, the variables it copies its value to) in a web of several
        variables; None in a web of one."""
        w = self.web_of[d]
        by_def = self.reached.get(w)
        if by_def is None:
            return None
        wanted = by_def.get(d, set())
        own = self.def_types.get(d)
        if own in wanted or not wanted or self.defs.sites[d][0] != "assign":
            first = self.typed_vars.get((w, own), self.var_of_web[w])
        else:  # only copies are read: the definition writes the web's own variable, else one that is read
            first = self.var_of_web[w] if self.var_of_web[w].type in wanted else \
                self.typed_vars[(w, min(wanted, key=str))]
        return first, [self.typed_vars[(w, t)] for t in sorted(wanted - {first.type}, key=str)]

    def _copy_definitions(self) -> None:
        """After each definition in a web of several variables, its value converted into the others it reaches:
        Numba converts at the phi node, which is where the paths meet; converting at the definition gives every
        use the same value, as no other definition of the name intervenes on the way."""
        if not self.reached:
            return

        def copies(s, target, first, others):
            out = []
            for var in others:
                value = ir.Name(target.name, var=first)
                value.type = first.type
                cast = self.converted(value, var.type, target.node)
                cast.type = var.type
                dest = ir.Name(target.name, var=var)
                dest.type = var.type
                out.append(ir.Assign(target=dest, value=cast, node=s.node))
            return out

        def walk(body):
            k = 0
            while k < len(body):
                s = body[k]
                for sub in sub_blocks(s):
                    walk(sub)
                after = []
                if isinstance(s, ir.Assign):
                    written = self._written(s.def_id)
                    if written is not None:
                        after = copies(s, s.target, *written)
                elif isinstance(s, ir.TupleCall):
                    for t, d in zip(s.targets, s.def_ids):
                        written = self._written(d)
                        if written is not None:
                            after += copies(s, t, *written)
                body[k + 1:k + 1] = after
                k += 1 + len(after)

        walk(self.fn.body)

    def _loop_local_webs(self) -> dict:
        out = {}
        uses_of_web: dict = {}  # web -> its Name uses, from one walk of the body
        for n in walk_body(self.fn.body):
            if isinstance(n, ir.Name) and n.defs:
                uses_of_web.setdefault(self.web_of[min(n.defs)], []).append(n)
        defs_in_web = Counter(self.web_of.values())
        for d, site in enumerate(self.defs.sites):
            if site[0] != "for":
                continue
            w = self.web_of[d]
            if defs_in_web[w] > 1:  # another definition shares the counter's web
                continue
            inside = {id(n) for n in walk_body(site[1].body)}
            if all(id(n) in inside for n in uses_of_web.get(w, ())):
                out[w] = self.defs.names[d]
        return out

    def _bind_names(self, body):
        typed = self.typed_vars
        for s in body:
            for ex in stmt_exprs(s):
                for node in walk_expr(ex):
                    if isinstance(node, ir.Name) and node.defs:
                        w = self.web_of[min(node.defs)]
                        node.var = typed.get((w, node.type), self.var_of_web[w])
            if isinstance(s, (ir.Assign, ir.ForRange)):
                s.target.var = self._target_var(s.def_id)
                s.target.type = s.target.var.type
            elif isinstance(s, ir.TupleCall):
                for t, d in zip(s.targets, s.def_ids):
                    t.var = self._target_var(d)
                    t.type = t.var.type
            for sub in sub_blocks(s):
                self._bind_names(sub)

    def _target_var(self, d):
        written = self._written(d)
        return written[0] if written is not None else self.var_of_web[self.web_of[d]]


def _c_identifier(name: str, taken: set) -> str:
    """Distinct among the function's variables; lower/names.py keeps it clear of C's own names."""
    c = name
    while c in taken:
        c = c + "_"
    return c


def _type_suffix(t) -> str:
    """`i64`, `f32`, `u8`, `b`: a C variable's name after its type, where one Python name needs several."""
    if isinstance(t, T.Scalar):
        return t.kind + (str(t.bits) if t.kind != "b" else "")
    return str(t).replace("[", "_").replace("]", "").replace(":", "").replace(",", "_").replace(" ", "")
