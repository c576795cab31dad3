"""2.5's SDPA change (a fully masked row gives zeros, not NaN) against the masks a file gives
its SDPA calls (``watcher/impact/code/masks.py``): a mask that keeps a key in every row, as far
as the file shows, is not reached; any mask the file does not show in full still is."""

from __future__ import annotations

import ast
import textwrap

import pytest
from conftest import FIXTURES

from watcher.impact.code import scan_codebase
from watcher.impact.code.masks import MaskReader
from watcher.impact.model import Subjects
from watcher.impact.reach.match import find_affects
from watcher.impact.subjects import read_subjects
from watcher.models import ClassifiedItem

NOTES = FIXTURES / "releases" / "pytorch" / "v2.5.0.md"


def keeps_rows(source: str) -> bool:
    """Whether the file's one SDPA call is shown to keep a key in every row."""
    tree = ast.parse(textwrap.dedent(source))
    (call,) = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and
               getattr(node.func, "attr", "") == "scaled_dot_product_attention"]
    return MaskReader(tree).keeps_rows(call)


# LLaMA2-Accessory's attention: a "causal" sentinel handed down the model's blocks by position
# under its own name, replaced by positions compared (right-aligned, the equal ones attended).
SENTINEL = """\
    import torch
    import torch.nn.functional as F
    class Attention:
        def forward(self, x, start_pos, mask):
            if isinstance(mask, str):
                mask = self._make_causal_mask(x.size(2), x.size(2) + start_pos)
                mask = mask.to(x.device)
            return F.scaled_dot_product_attention(x, x, x, attn_mask=mask)
        def _make_causal_mask(self, q_len, kv_len):
            q_indices = torch.arange(q_len) - q_len
            kv_indices = torch.arange(kv_len) - kv_len
            return q_indices.view(-1, 1) >= kv_indices.view(1, -1)
    class Block:
        def forward(self, x, start_pos, mask):
            return self.attention.forward(x, start_pos, mask)
    class Model:
        def forward(self, x, start_pos):
            mask = None if x.size(1) == 1 else "causal"
            for layer in self.layers:
                x = layer(x, start_pos, mask)
            return x
    """
# CLIP's causal buffer: -inf above the diagonal.
BUFFER = """\
    import torch
    import torch.nn.functional as F
    class Text:
        def __init__(self, n):
            self.register_buffer("attn_mask", self.build_mask(n), persistent=False)
        def build_mask(self, n):
            mask = torch.empty(n, n).fill_(float("-inf")).triu_(1)
            return mask
        def forward(self, q, k, v):
            return F.scaled_dot_product_attention(q, k, v, attn_mask=self.attn_mask)
    """
# TorchServe's tensor-parallel llama: a finite additive bias, torch.finfo(dtype).min.
FINITE = """\
    import torch
    class Attention:
        def forward(self, q, k, v, mask):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    class Model:
        def forward(self, h, padding):
            mask = torch.full((1, 1, 8, 8), torch.finfo(h.dtype).min)
            mask = torch.triu(mask, diagonal=1).type_as(h)
            mask.masked_fill_(padding, torch.finfo(h.dtype).min)
            return self.attention(h, h, h, mask=mask)
    """
SCALED = """\
    import torch.nn.functional as F
    def attend(q, k, v, attention_mask):
        bias = (1.0 - attention_mask[:, None, None, :]) * -10000.0
        return F.scaled_dot_product_attention(q, k, v, bias)
    """
# kornia's and MONAI's attention: the caller's mask, whatever it is.
PUBLIC = """\
    import torch.nn.functional as F
    class SelfAttention:
        def forward(self, x, attn_mask=None):
            if attn_mask is not None:
                attn_mask = attn_mask.unsqueeze(1)
            return F.scaled_dot_product_attention(x, x, x, attn_mask=attn_mask)
    """
# A padding mask: a sample of length 0, or left padding, masks whole rows.
PADDING = """\
    import torch
    import torch.nn.functional as F
    def attend(q, k, v, lengths):
        mask = torch.arange(k.size(2))[None, :] < lengths[:, None]
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None, None, :])
    """
ALL_INF = """\
    import torch
    import torch.nn.functional as F
    def attend(q, k, v):
        mask = torch.full((8, 8), float("-inf"))
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    """
# Boolean True attends in SDPA: the upper triangle without its diagonal leaves the last row empty.
UPPER = """\
    import torch
    import torch.nn.functional as F
    def attend(q, k, v):
        mask = torch.ones(8, 8, dtype=torch.bool).triu(diagonal=1)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    """
# A name the file gives a safe mask in another function: the parameter is still anyone's.
ELSEWHERE = """\
    import torch
    import torch.nn.functional as F
    def attend(q, k, v, attention_mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask)
    def block_mask(n):
        attention_mask = torch.zeros(n, n)
        return attention_mask
    """

# open_clip's NaFlex masks: padding keys removed, then the diagonal forced attended, built by
# functions whose results reach the model's blocks directly and unpacked from a tuple.
FORCED = """\
    import torch
    import torch.nn.functional as F
    def prefix_mask(valid, s):
        causal = torch.tril(torch.ones(s, s, dtype=torch.bool))
        allowed = (causal | valid[:, None, :]).clone()
        allowed &= valid[:, None, :]
        idx = torch.arange(s)
        allowed[:, idx, idx] = True  # guard against all-masked query rows
        return allowed.unsqueeze(1)
    def pack(x, valid):
        return x, prefix_mask(valid, x.size(1))
    class Attention:
        def forward(self, x, attn_mask):
            return F.scaled_dot_product_attention(x, x, x, attn_mask=attn_mask)
    class Model:
        def forward(self, x, valid):
            x, attn_mask = pack(x, valid)
            return self.attention(x, attn_mask)
    """
# The diagonal forced only on one branch: the padding mask may still come.
FORCED_IF = FORCED.replace("        allowed[:, idx, idx] = True",
                           "        if valid.all():\n            allowed[:, idx, idx] = True")
# Padding keys removed after the diagonal was forced.
FORCED_BEFORE = FORCED.replace("        allowed &= valid[:, None, :]\n", "").replace(
    "        return allowed.unsqueeze(1)",
    "        allowed = allowed & valid[:, None, :]\n        return allowed.unsqueeze(1)")
# A causal mask and'ed with padding loses the diagonal of a padded row; or'ed with eye, not.
AND_PADDING = """\
    import torch
    import torch.nn.functional as F
    def attend(q, valid):
        n = q.size(2)
        mask = torch.ones(n, n, dtype=torch.bool).tril() & valid[:, None, None, :]
        return F.scaled_dot_product_attention(q, q, q, attn_mask=mask)
    """
OR_EYE = AND_PADDING.replace(
    "torch.ones(n, n, dtype=torch.bool).tril() & valid[:, None, None, :]",
    "valid[:, None, None, :].logical_or(torch.eye(n, dtype=torch.bool))")
# An element of a tuple the function returns that is not the mask: the caller's own input.
WRONG_ELEMENT = FORCED.replace("return x, prefix_mask(valid, x.size(1))",
                               "return valid, prefix_mask(valid, x.size(1))").replace(
    "x, attn_mask = pack(x, valid)", "attn_mask, x = pack(x, valid)")
# The last assignment before a read is what it reads: -inf above the diagonal only.
REASSIGNED = """\
    import torch
    import torch.nn.functional as F
    def attend(q):
        n = q.size(2)
        mask = torch.full((n, n), float("-inf"))
        mask = torch.triu(mask, diagonal=1)
        return F.scaled_dot_product_attention(q, q, q, attn_mask=mask)
    """
# ... unless a loop may bring a later one back to the read.
REASSIGNED_IN_LOOP = REASSIGNED.replace(
    "        return F.scaled_dot_product_attention(q, q, q, attn_mask=mask)",
    "        for _ in range(2):\n"
    "            out = F.scaled_dot_product_attention(q, q, q, attn_mask=mask)\n"
    "            mask = torch.full((n, n), float(\"-inf\"))\n"
    "        return out")
# darts' Chronos-2: the raw padding mask is handed to the helpers that turn it into finite
# biases; a call of a function of the file by name gives only that function's parameters.
HELPERS = """\
    import torch
    import torch.nn.functional as F
    class Layer:
        def forward(self, h, attention_mask):
            return F.scaled_dot_product_attention(h, h, h, attn_mask=attention_mask)
    class Encoder:
        def invert(self, attention_mask, dtype):
            attention_mask = attention_mask[:, None, None, :].to(dtype)
            attention_mask = (1.0 - attention_mask) * torch.finfo(dtype).min
            return attention_mask
        def forward(self, h, *, attention_mask):
            extended = self.invert(attention_mask, h.dtype)
            for layer in self.layers:
                h = layer(h, attention_mask=extended)
            return h
    """
# TGI's VLM masks: a boolean layout turned into a bias, 0 where attended, finfo.min elsewhere.
WHERE = """\
    import torch
    import torch.nn.functional as F
    def attend(q, keep):
        min_dtype = torch.finfo(q.dtype).min
        bias = torch.where(keep, 0, min_dtype)
        return F.scaled_dot_product_attention(q, q, q, attn_mask=bias)
    """
# ... and with -inf where not attended: a row kept nowhere is all -inf.
WHERE_INF = WHERE.replace("torch.finfo(q.dtype).min", 'float("-inf")')
# surya's static cache: finfo.min written past the current position of a finite bias.
STORED_FINITE = """\
    import torch
    import torch.nn.functional as F
    def attend(q, pos):
        bias = torch.zeros(q.size(2), q.size(2))
        bias[:, pos + 1:] = torch.finfo(bias.dtype).min
        return F.scaled_dot_product_attention(q, q, q, attn_mask=bias)
    """
# -inf written into the keys of padding: a padded sample's rows may be emptied.
STORED_INF = STORED_FINITE.replace("torch.finfo(bias.dtype).min", 'float("-inf")')
# nunchaku's FLUX processor: a mask is refused before the call, so SDPA only ever gets None.
REFUSED = """\
    import torch.nn.functional as F
    class Processor:
        def __call__(self, q, k, v, attention_mask=None):
            if attention_mask is not None:
                raise NotImplementedError("attention_mask is not supported")
            q = q * 2
            return F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask)
    """
# ... refused only on a branch, or given another value after the refusal: anyone's mask.
REFUSED_IF = REFUSED.replace("            if attention_mask is not None:",
                             "            if q.is_cuda and attention_mask is not None:")
REFUSED_THEN_SET = REFUSED.replace("            q = q * 2",
                                   "            attention_mask = self.mask")


@pytest.mark.parametrize(("source", "kept"), [
    (SENTINEL, True), (BUFFER, True), (FINITE, True), (SCALED, True),
    (FORCED, True), (OR_EYE, True), (REASSIGNED, True), (HELPERS, True), (WHERE, True),
    (STORED_FINITE, True), (WHERE_INF, False), (STORED_INF, False), (REFUSED, True),
    (REFUSED_IF, False), (REFUSED_THEN_SET, False),
    (PUBLIC, False), (PADDING, False), (ALL_INF, False), (UPPER, False), (ELSEWHERE, False),
    (FORCED_IF, False), (FORCED_BEFORE, False), (AND_PADDING, False), (WRONG_ELEMENT, False),
    (REASSIGNED_IN_LOOP, False),
], ids=["sentinel-then-positions", "triu-of-inf-buffer", "finfo-min-bias", "scaled-bias",
        "diagonal-forced-then-unpacked", "or-eye", "last-assignment-read", "helpers-by-name",
        "where-finite", "finite-written-in", "where-minus-inf", "minus-inf-written-in",
        "refused-before", "refused-on-a-condition", "set-after-refusal",
        "a-public-parameter", "padding", "all-minus-inf", "bool-upper-triangle",
        "same-name-elsewhere", "diagonal-forced-on-a-branch", "padding-removed-after-forcing",
        "causal-and-padding", "another-element-unpacked", "reassigned-in-a-loop"])
def test_a_mask_keeps_every_row_only_where_the_file_shows_all_it_can_be(source, kept):
    assert keeps_rows(source) is kept


def test_the_sdpa_change_of_2_5_skips_calls_whose_masks_keep_every_row(tmp_path):
    """The real 2.5 item reads as limited to fully masked rows of ``attn_mask``; of two
    files, only the one passing its caller's mask is reached."""
    text = NOTES.read_text(encoding="utf-8")
    start = text.index("Update fused kernels and call _safe_softmax")
    body = text[start:text.index("\n#", start)]
    subjects = read_subjects(ClassifiedItem(text=body, subsystem="nn", kind="bc_breaking"))
    sdpa = [subject for subject in subjects.python if subject.option == "attn_mask"]
    assert sdpa and all(subject.limited_to == "fully masked rows" for subject in sdpa)
    (tmp_path / "llama.py").write_text(textwrap.dedent(SENTINEL))
    (tmp_path / "selfattention.py").write_text(textwrap.dedent(PUBLIC))
    index = scan_codebase(str(tmp_path), {})
    affects = find_affects(Subjects(python=subjects.python), index, "code")
    assert sorted({(affect.path, affect.tier) for affect in affects}) == [
        ("selfattention.py", "check")]


@pytest.mark.timeout(20)
def test_names_feeding_each_other_in_many_ways_are_read_within_a_budget():
    """open_clip's transformer hands masks through dozens of names and functions; reading
    every path took minutes. Past a budget of expressions the mask is unknown (reached)."""
    chain = "\n".join(f"    m{n} = m{n - 1} if c else m{n - 2}" for n in range(2, 60))
    source = ("import torch.nn.functional as F\n"
              "def attend(q, c):\n    m0 = None\n    m1 = None\n" + chain +
              "\n    return F.scaled_dot_product_attention(q, q, q, attn_mask=m59)\n")
    assert keeps_rows(source) is False


def test_a_package_call_passing_a_mask_gives_no_parameter_of_the_file():
    """A causal SDPA call in one function says nothing of another's ``attn_mask`` parameter:
    ``F.scaled_dot_product_attention(..., attn_mask=causal)`` is torch's call, not a caller of
    the file's ``forward``."""
    source = """\
        import torch
        import torch.nn.functional as F
        class Attention:
            def forward(self, x, attn_mask=None):
                return F.scaled_dot_product_attention(x, x, x, attn_mask=attn_mask)
        def causal(q):
            mask = torch.ones(q.size(2), q.size(2), dtype=torch.bool).tril()
            return F.scaled_dot_product_attention(q, q, q, attn_mask=mask)
        """
    tree = ast.parse(textwrap.dedent(source))
    calls = sorted((node for node in ast.walk(tree) if isinstance(node, ast.Call) and
                    getattr(node.func, "attr", "") == "scaled_dot_product_attention"),
                   key=lambda node: node.lineno)
    reader = MaskReader(tree)
    assert [reader.keeps_rows(call) for call in calls] == [False, True]
