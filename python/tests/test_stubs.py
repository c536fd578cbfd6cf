"""The type stubs (barecat_rs/*.pyi) describe every public name, so that they cannot
silently fall behind the API: a public name of ``barecat_rs`` (``__all__`` and
``dir()``), of its submodules, or a public method or attribute of one of its classes
(``Barecat``, ``Records``, the info classes, ...) without a stub fails this test,
and so does a stub of something that does not exist."""

import ast
import inspect
import pathlib
import types

import barecat_rs
import barecat_rs._native

PKG = pathlib.Path(barecat_rs.__file__).parent
MODULES = ["__init__", "_barecat", "_fileobj", "_records", "_native", "codecs", "exceptions",
           "_index", "_api", "_maint"]


def stub_tree(module):
    path = PKG / f"{module}.pyi"
    assert path.is_file(), f"{path.name} is missing"
    return ast.parse(path.read_text(), filename=str(path))


def defined_names(body):
    """Names a stub body defines: classes, functions, assignments, imports."""
    names = set()
    for node in body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
    return names


def stub_classes():
    """Every class of every stub: name -> (its members, the names of its bases,
    its methods and properties)."""
    classes = {}
    for module in MODULES:
        for node in stub_tree(module).body:
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b).split("[")[0].split(".")[-1] for b in node.bases]
                methods = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
                classes[node.name] = (defined_names(node.body), bases, methods)
    return classes


def stub_members(classes, name):
    """Members of a stub class, with those of its stub base classes."""
    members, bases, _ = classes[name]
    members = set(members)
    for base in bases:
        if base in classes:
            members |= stub_members(classes, base)
    return members


def ours(obj):
    return getattr(obj, "__module__", "").startswith("barecat_rs")


def public(name):
    return not name.startswith("_")


def test_the_stubs_and_py_typed_ship_with_the_package():
    for module in MODULES:
        assert (PKG / f"{module}.pyi").is_file(), module
    assert (PKG / "py.typed").is_file()


def test_every_public_name_of_the_package_has_a_stub():
    stubbed = defined_names(stub_tree("__init__").body)
    names = set(barecat_rs.__all__) | {n for n in dir(barecat_rs) if public(n)}
    missing = []
    for name in sorted(names):
        value = getattr(barecat_rs, name)
        if isinstance(value, types.ModuleType):
            if not (PKG / f"{name}.pyi").is_file():
                missing.append(f"module {name} (no {name}.pyi)")
        elif name not in stubbed:
            missing.append(name)
    assert not missing, f"barecat_rs/__init__.pyi lacks: {', '.join(missing)}"
    assert "__all__" in stubbed


def test_every_public_name_of_each_submodule_has_a_stub():
    missing = []
    for module in MODULES[1:]:
        runtime = __import__(f"barecat_rs.{module}", fromlist=["_"])
        stubbed = defined_names(stub_tree(module).body)
        for name in dir(runtime):
            value = getattr(runtime, name)
            if not public(name) or isinstance(value, types.ModuleType):
                continue
            # Classes and functions are checked where they are defined: what a
            # module imports (from the standard library or from another module of
            # ours) is not its own API. The native classes call themselves
            # `barecat_rs` or `barecat_rs._native`.
            if inspect.isclass(value) or inspect.isroutine(value):
                home = getattr(value, "__module__", "")
                if home not in (f"barecat_rs.{module}", "barecat_rs" if module == "_native" else ""):
                    continue
            if name not in stubbed:
                missing.append(f"{module}.{name}")
    assert not missing, f"no stub for: {', '.join(missing)}"


def classes_to_check():
    """Every class of ours reachable from the package and the native module."""
    found = {}
    for module in [barecat_rs, barecat_rs._native] + [
        __import__(f"barecat_rs.{m}", fromlist=["_"]) for m in MODULES[1:]
    ]:
        for name in dir(module):
            value = getattr(module, name)
            if inspect.isclass(value) and ours(value):
                found[value.__name__] = value
    return found


def test_every_public_member_of_every_class_has_a_stub():
    classes = stub_classes()
    runtime = classes_to_check()
    for required in ["Barecat", "Records", "_Archive", "_Records", "BarecatFileInfo",
                     "BarecatDirInfo", "Index", "BarecatFileObject", "DecodedView"]:
        assert required in runtime, required
    missing = []
    for name, cls in sorted(runtime.items()):
        if name not in classes:
            missing.append(f"class {name}")
            continue
        members = stub_members(classes, name)
        for attr in dir(cls):
            if not public(attr):
                continue
            # Members inherited from the standard library (MutableMapping,
            # io.RawIOBase, Exception, Flag, object) are typeshed's business.
            owner = next((k for k in cls.__mro__ if attr in vars(k)), None)
            if owner is None or not ours(owner):
                continue
            if attr not in members:
                missing.append(f"{name}.{attr}")
    assert not missing, f"no stub for: {', '.join(missing)}"


def test_stubs_describe_nothing_that_does_not_exist():
    classes = stub_classes()
    runtime = classes_to_check()
    extra = []
    for name, (_, _, methods) in sorted(classes.items()):
        cls = runtime.get(name)
        if cls is None:
            extra.append(f"class {name}")
            continue
        extra += [f"{name}.{m}" for m in sorted(methods) if not hasattr(cls, m)]
    assert not extra, f"stubs of things that do not exist: {', '.join(extra)}"
