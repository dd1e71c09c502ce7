"""The namespace the MMV PMDA builds as it loads its files (MMV-ID-3).

The PMDA inserts every metric's name into one tree, file by file in load order and metric by
metric in file order, after its own ``mmv.control.*`` names. A name that is already a leaf is
refused, and its metric is not created at all (``verify_metric_name``: EEXIST). Any other
name is inserted as libpcp's ``AddPMNSNode`` inserts it, which lets a leaf get children and
refuses a name that is an existing non-leaf: ``p.q`` then ``p.q.r`` leaves ``p.q.r`` below a
leaf, where no lookup or traversal reaches it; ``p.q.r`` then ``p.q`` leaves ``p.q`` without
a name. Either way the metric is created (its PMID is served) but has no name anyone can
find. :class:`PmdaNamespace` follows the same steps, so it says which of two conflicting
names the PMDA exports.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["Placement", "Placed", "PmdaNamespace", "CONTROL_NAMES", "CONTROL_NAMES_PCP7"]

#: the PMDA's own metrics, inserted before any file's (every version)
CONTROL_NAMES = ("mmv.control.reload", "mmv.control.debug", "mmv.control.files")
#: the one PCP 7 adds (6.0.3 and 6.3.x export a file's metric of that name)
CONTROL_NAMES_PCP7 = ("mmv.control.metrics",)


class Placement(enum.Enum):
    """What becomes of a metric whose name the PMDA inserts."""

    EXPORTED = "exported"        # found by name and by traversal
    DUPLICATE = "duplicate"      # the name is an existing leaf: the metric is not created
    UNDER_LEAF = "under-leaf"    # created below an existing leaf: no lookup reaches it
    NON_LEAF = "non-leaf"        # the name is an existing non-leaf: created with no name


class _Node:
    __slots__ = ("children", "leaf", "owner")

    def __init__(self, leaf: bool = False, owner: str = "") -> None:
        self.children: dict[str, _Node] = {}
        self.leaf = leaf             # a PMID is set (a leaf may get children, see above)
        self.owner = owner           # the full name of the metric that made it a leaf


@dataclass(frozen=True)
class Placed:
    """Where a name went, and the earlier name that decided it (None when exported)."""

    placement: Placement
    other: str | None = None

    @property
    def exported(self) -> bool:
        return self.placement is Placement.EXPORTED


_EXPORTED = Placed(Placement.EXPORTED)     # made once: a file at the limits places 1023 names


class PmdaNamespace:
    """The PMDA's name tree as files are loaded into it. ``pcp7``: with PCP 7's fourth
    control metric (the kit's view; PCP 6 exports a file's metric of that name)."""

    def __init__(self, *, pcp7: bool = True) -> None:
        self.root = _Node()
        # paths whose every node is a non-leaf, by their names joined: a node is made a leaf
        # only as it is created, so such a path stays one, and a name below it whose last
        # part is new is exported without a walk (a file's metrics share a few such paths)
        self._inner: dict[str, _Node] = {}
        for name in CONTROL_NAMES + (CONTROL_NAMES_PCP7 if pcp7 else ()):
            self.add(name)

    def add(self, name: str) -> Placed:
        """Insert a metric's full name (``mmv.<file>.<name>``) as the PMDA does: refused as a
        duplicate where pmdaNodeLookup (which descends through non-leaves only) finds a leaf;
        one walk down the path serves that lookup and the insertion."""
        prefix, dot, last = name.rpartition(".")
        parent = self._inner.get(prefix) if dot else self.root
        if parent is not None and last not in parent.children:
            parent.children[last] = _Node(leaf=True, owner=name)
            return _EXPORTED
        return self._walk(name)

    def _walk(self, name: str) -> Placed:
        parts = name.split(".")
        node = self.root
        under: _Node | None = None      # the first leaf the path runs through
        created = False
        parent_of_last = node
        for k, part in enumerate(parts):
            parent_of_last = node
            child = node.children.get(part)
            if child is None:
                child = node.children[part] = _Node()
                created = True
            elif child.leaf and k < len(parts) - 1 and under is None:
                under = child
            node = child
        if not created:                 # the whole path is there: AddPMNSNode refuses it
            if node.leaf and under is None:     # found by pmdaNodeLookup: a duplicate
                return Placed(Placement.DUPLICATE, node.owner)
            if node.leaf:               # a leaf no lookup reaches (below another leaf)
                return Placed(Placement.UNDER_LEAF, under.owner if under else node.owner)
            return Placed(Placement.NON_LEAF, _first_leaf(node))
        node.leaf, node.owner = True, name
        if under is not None:
            return Placed(Placement.UNDER_LEAF, under.owner)
        if len(parts) > 1:              # no leaf above the new one: its parent's path is inner
            self._inner[name.rpartition(".")[0]] = parent_of_last
        return _EXPORTED

    def names(self) -> list[str]:
        """The names a traversal finds (a leaf's children are not visited), control ones
        included, in sorted order."""
        out: list[str] = []

        def walk(node: _Node) -> None:
            for child in node.children.values():
                if child.leaf:
                    out.append(child.owner)
                else:
                    walk(child)
        walk(self.root)
        return sorted(out)


def _first_leaf(node: _Node) -> str:
    """A name below a non-leaf node (the earlier metric a NON_LEAF name collides with)."""
    while not node.leaf:
        node = next(iter(node.children.values()))
    return node.owner
