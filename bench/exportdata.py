"""Archives of the benchmark datasets for bench/extract.py and bench/export.py.

The member paths are `<tree name>/...`, the same as in a tar made with
`tar -C <data> <tree name>`; the archive is built once per dataset and scale by
bench/archives.py.
"""
from archives import archive, dataset


def archive_of(name, scale):
    """(tree, archive) for dataset `name` at `scale`, generating what is missing."""
    tree = dataset(name, scale)
    return tree, archive(name, scale, prefix=tree.name)
