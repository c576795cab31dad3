"""Release-notes markdown → items, each with the section path it stands under.

Built for the family of styles PyTorch and PyTorch/XLA notes are written in, recognised by
structure and by name, never by heading level or by file:

* a bullet is an item, with its continuation lines, code and nested explanation;
* a bullet that only names a group (``- c10d``, ``- DTensor:``: no reference of its own) whose
  nested bullets carry references is split: each nested bullet is an item and the group's name
  joins the section path; a short reference-less label followed by sibling bullets that carry
  references (a flattened group) governs those siblings the same way;
* a heading followed by prose or code is an entry (``### title`` + prose + code in BC-breaking
  notes, ``#### [Beta] Title`` + prose in highlights); a heading whose title cites PRs is an
  entry whatever follows; other headings are context (section, area, or a topic of the notes);
* a paragraph of only a bold title followed by prose is an entry as such a heading is
  (``**[Beta] torch.library.triton_op**`` + prose, PyTorch 2.6's highlights); over a list of
  changes it names their group, and stays what it was read as before;
* in BC-breaking and deprecation sections, prose, code and sub-headings after a bullet belong to
  that bullet (the migration notes), so nothing a reader needs is left outside an item;
* tables of contents (anchor links, or bullets naming the document's own sections) are skipped;
  table cells (PyTorch's highlight tables) are items unless an entry tells the same story.

Which names are sections or areas is the taxonomy's business; the parser asks it through
``HeadingLookup``. Flattened notes (one huge line, or one line per paragraph) are first given
their structure back by ``watcher.notes.flat``.

``document`` holds ``parse_notes``; ``walk`` walks the blocks, ``lists`` reads a list's
bullets (with ``bullets``' helpers), ``drafts`` builds the items.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.notes.parse.document import ParsedNotes as ParsedNotes
    from watcher.notes.parse.document import parse_notes as parse_notes
    from watcher.notes.parse.drafts import CONTINUED_KINDS as CONTINUED_KINDS

_EXPORTS = {
    "CONTINUED_KINDS": "drafts",
    "parse_notes": "document",
    "ParsedNotes": "document",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
