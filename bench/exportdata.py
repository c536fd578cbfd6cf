"""Archives of the benchmark datasets for bench/extract.py and bench/export.py.

The archive is made once per dataset and scale, by our `barecat-create` when it is
built, else by Python barecat's `create`; either way the member paths are
`<tree name>/...`, the same as in a tar made with `tar -C <data> <tree name>`.
"""
from pathlib import Path

from harness import DATA, WORK, ours, py_barecat, sh


def archive_of(name, scale):
    """(tree, archive) for dataset `name` at `scale`, generating what is missing."""
    WORK.mkdir(parents=True, exist_ok=True)
    tree = DATA / (name if scale == 1 else f"{name}@{scale:g}")
    sh(f"python3 gen_dataset.py {name} --scale {scale} > /dev/null", cwd=str(WORK.parent))
    arch = WORK / f"export-{name}-{scale:g}.barecat"
    if not arch.exists():
        create = Path(ours("barecat-create"))
        tmp = arch.with_name(arch.name + ".new")
        sh(f"rm -f {tmp} {tmp}-shard-*")
        if create.exists():
            sh(f"{create} -q -f {tmp} -C {tree.parent} {tree.name}")
        else:
            sh(f"{py_barecat()} create {tmp} {tree.name} > /dev/null", cwd=str(tree.parent))
        for p in sorted(WORK.glob(tmp.name + "-shard-*")):
            p.rename(WORK / p.name.replace(tmp.name, arch.name))
        tmp.rename(arch)
    return tree, arch
