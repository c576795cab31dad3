"""The classifier: weighs the evidence for each item's subsystem (headings, PR labels, the APIs
it names, rules, the statistical model; strongest first, as the package docstring says) and
asks ``kinds`` for its kind. What the figures are, and how they were measured:
scripts/eval_classifier.py and the README.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from watcher.models import ClassifiedItem, Item, top_level
from watcher.notes.classify.evidence import (
    HEADING_REASON,
    LABEL_REASON,
    NO_RULE,
    Builtin,
    Decision,
    Headings,
    RuleScores,
    Verdict,
)
from watcher.notes.classify.kinds import SECTION_REASON, Kinds, kind_of_sections
from watcher.notes.classify.named import api_verdict, with_apis
from watcher.notes.headings import CATCH_ALL
from watcher.notes.model import RULE_CUE, SubsystemModel, builtin_model, features, top_features
from watcher.notes.taxonomy import DECISIVE, USER_RULE, Taxonomy
from watcher.notes.text import strip_code, unescape_markdown

if TYPE_CHECKING:
    from watcher.notes.labels import LabelMap

WORDS_READ = 5_000  # characters of an item's text the rules and the model read
RULE_CONFIDENCE = 0.9  # a decisive rule's precision, where no model file measured it
# A guess's candidates (``ClassifiedItem.candidates``): the model's likeliest subsystems down to
# this probability, at most ``MAX_CANDIDATES``, calibrated on held-out releases
# (scripts/calibrate_candidates.py; README "Classification").
CANDIDATE_FLOOR = 0.08
MAX_CANDIDATES = 3
SECTIONS_KEPT = 4096  # heading paths remembered; a release has a few hundred at most
GUESSES_KEPT = 4096  # the model's guesses remembered, by the features it weighs


class Classifier:
    """``model=None`` classifies by headings and rules only (for measuring what the model adds);
    the default is the shipped model, loaded the first time an item needs it."""

    def __init__(self, taxonomy: Taxonomy,
                 model: SubsystemModel | Builtin | None = Builtin.MODEL) -> None:
        self.taxonomy = taxonomy
        self._model = model
        self.order = {name: index for index, name in enumerate(taxonomy.names)}
        # Heading paths seen, and what they say (the taxonomy is not changed once in use).
        self._by_section: dict[tuple[tuple[str, ...], int], Headings] = {}
        self._guesses: dict[tuple[str | None, tuple[str, ...], int], Verdict] = {}
        self.kinds = Kinds(taxonomy)

    @property
    def model(self) -> SubsystemModel | None:
        if self._model is Builtin.MODEL:
            self._model = builtin_model()
        return self._model

    def classify(self, item: Item, *, repo: str | None = None, patch: bool = False
                 ) -> ClassifiedItem:
        return self.explain(item, repo=repo, patch=patch).item

    def classify_all(self, items: list[Item], *, repo: str | None = None, patch: bool = False
                     ) -> list[ClassifiedItem]:
        """Each item classified; one that reads the same as an earlier one (its text, headings
        and lead-in) takes that one's verdict, so a body repeating one line costs one.
        ``repo`` (``owner/name``): whose release it is, for the model's prior; ``patch``: the
        release is a patch (``explain``)."""
        done: dict[tuple[str, tuple[str, ...], int, str], ClassifiedItem] = {}
        out: list[ClassifiedItem] = []
        for item in items:
            key = item.text, item.section, item.group_depth, item.lead
            earlier = done.get(key)
            if earlier is None:
                earlier = done[key] = self.classify(item, repo=repo, patch=patch)
            elif earlier.prs != item.prs or earlier.group != item.group:
                earlier = ClassifiedItem(**{
                    **item.__dict__, "subsystem": earlier.subsystem, "kind": earlier.kind,
                    "decided_by": earlier.decided_by, "confidence": earlier.confidence,
                    "candidates": earlier.candidates})
            out.append(earlier)
        return out

    def explain(self, item: Item, labels: Sequence[str] = (),
                label_map: LabelMap | None = None, *, repo: str | None = None,
                patch: bool = False) -> Decision:
        """``labels``: the item's PRs' labels (``classify.use_pr_labels``). They are the
        maintainers' own verdict, so they win over rules and the model, but not over the
        headings the release notes were written under. ``repo``: whose release it is; the
        model starts from that repository's prior (PyTorch/XLA's own areas first).
        ``patch``: a patch release (``is_patch_release``), whose generic headings ("Other",
        "Fixes") say what its items are, not whose: a catch-all heading leaves the subsystem
        to the item's words, and the kind is the patch's (``Kinds.decide``)."""
        headings = self._headings(item.section, item.group_depth)
        words = self._words(item, headings)
        verdict = self._subsystem(headings, words, repo, patch)
        kind, kind_reason = self.kinds.decide(item, headings.kind, words, patch=patch)
        if labels and label_map is not None:
            by_label, kind_by_label = label_map.decide(labels)
            if by_label and verdict.decided_by != "heading":
                verdict = Verdict(by_label, "label", 1.0, f"{LABEL_REASON}for {by_label!r}")
            if kind_by_label and not kind_reason.startswith(SECTION_REASON):
                kind, kind_reason = kind_by_label, f"PR label for {kind_by_label!r}"
        # Its fields as they are (dumping them first would cost more than all the rest).
        classified = ClassifiedItem(**{
            **item.__dict__, "subsystem": verdict.subsystem, "kind": kind,
            "decided_by": verdict.decided_by, "confidence": round(verdict.confidence, 3),
            "candidates": verdict.candidates or None})
        return Decision(classified, verdict.reason, kind_reason)

    def words(self, item: Item) -> str:
        """The item's prose without code blocks, plus headings above it that are not areas or
        sections (a BC-breaking entry's title, for the bullets grouped under it). Only the
        first ``WORDS_READ`` characters: what an item is about is said at its start, and a
        100 KB item must cost a classification no more than a long real one does."""
        return self._words(item, self._headings(item.section, item.group_depth))

    @staticmethod
    def _words(item: Item, headings: Headings) -> str:
        prose = unescape_markdown(strip_code(item.text[:WORDS_READ], " "))
        return "\n".join([*headings.extra, prose])

    def _headings(self, section: tuple[str, ...], group_depth: int) -> Headings:
        """What the headings above an item say; many items share them, so once per path."""
        key = section, group_depth
        found = self._by_section.get(key)
        if found is None:
            if len(self._by_section) >= SECTIONS_KEPT:
                self._by_section.clear()
            found = self._by_section[key] = self._read_headings(section, group_depth)
        return found

    def _read_headings(self, section: tuple[str, ...], group_depth: int) -> Headings:
        """One pass over the path: each heading's meaning is looked up once, and gives both the
        area (subsystem) and the kind."""
        meanings = [self.taxonomy.meaning(heading) for heading in section]
        area: str | None = None
        fallback: tuple[str, str] | None = None
        catch_all = ""  # a "Miscellaneous" heading: it decides only if nothing below it does
        reason = ""
        for heading, (ids, _) in zip(section, meanings, strict=True):
            if area is None:
                deciding = [i for i in ids if i not in self.taxonomy.context_only]
                if deciding == [CATCH_ALL]:
                    catch_all = catch_all or heading
                elif deciding:
                    area = self._most_specific(deciding, top_level(deciding[0]))
                    reason = f"{HEADING_REASON}{heading!r}"
                elif ids and fallback is None:
                    fallback = ids[0], heading
            elif ids:
                refined = self._most_specific(ids, top_level(area))
                if refined and "/" in refined and refined != area:
                    area, reason = refined, f"{reason} > {heading!r}"
        if area is None and fallback is None and catch_all:
            area, reason = CATCH_ALL, f"{HEADING_REASON}{catch_all!r}"
        extra = tuple(h for h, (ids, kind) in zip(section, meanings, strict=True)
                      if not ids and kind is None)
        verdict = Verdict(area, "heading", 1.0, reason) if area is not None else None
        kinds = [kind for _, kind in meanings]
        return Headings(verdict, fallback, extra, kind_of_sections(section, kinds, group_depth))

    def _subsystem(self, headings: Headings, words: str, repo: str | None = None,
                   patch: bool = False) -> Verdict:
        area = headings.area
        if area is not None and not (patch and area.subsystem == CATCH_ALL):
            if "/" in area.subsystem:
                return area
            top = area.subsystem
            return area.refined(*self._best_finer(self.rule_scores(words, finer_of=top), top))
        if headings.fallback is not None:
            return self._under_context_heading(words, *headings.fallback)
        return self._by_text(words, repo)

    def _under_context_heading(self, words: str, subsystem: str, heading: str) -> Verdict:
        """A context-only heading with no area above it names a topic, not an owner: a rule that
        strongly names another subsystem wins over it (XLA's "Ongoing Dynamic Shape
        implementation" lists an SPMD item)."""
        scores = self.rule_scores(words)
        top = self.decisive(scores)
        if top is not None and top != top_level(subsystem):
            return self._rule_decision(scores, top)
        return Verdict(subsystem, "heading", 1.0, f"{HEADING_REASON}{heading!r}")

    @staticmethod
    def _most_specific(ids: list[str], top: str) -> str | None:
        same = [i for i in ids if top_level(i) == top]
        finer = [i for i in same if "/" in i]
        chosen = finer or same
        return chosen[0] if chosen else None

    def rule_scores(self, words: str, finer_of: str | None = None) -> RuleScores:
        """Every text rule that matches, or only those of subsystem ``finer_of``'s finer ids;
        the taxonomy's prefilter skips the rules whose literal is not in the text."""
        matched = list(self.taxonomy.matching_rules(words, finer_of))
        if not matched:
            return NO_RULE  # most items a heading does not place
        tops: dict[str, float] = defaultdict(float)
        finer: dict[str, float] = defaultdict(float)
        strongest: dict[str, tuple[float, str]] = {}  # the rule an explanation names
        for rule in matched:
            tops[top_level(rule.subsystem)] += rule.weight
            finer[rule.subsystem] += rule.weight
            for key in (rule.subsystem, top_level(rule.subsystem)):
                if key not in strongest or rule.weight > strongest[key][0]:
                    strongest[key] = rule.weight, rule.pattern.pattern
        return RuleScores(dict(tops), dict(finer), {k: p for k, (_, p) in strongest.items()})

    def decisive(self, scores: RuleScores) -> str | None:
        """The subsystem the rules name beyond doubt (a decisive pattern's score), if any."""
        top, score = scores.best(self.order)
        return top if score >= DECISIVE else None

    def _best_finer(self, scores: RuleScores, top: str) -> tuple[str | None, str]:
        candidates = [(score, -self.order.get(s, 0), s) for s, score in scores.finer.items()
                      if "/" in s and top_level(s) == top and s not in self.taxonomy.context_only]
        if not candidates:
            return None, ""
        best = max(candidates)[2]
        return best, scores.strongest_rule[best]

    def _rule_decision(self, scores: RuleScores, top: str, confidence: float | None = None
                       ) -> Verdict:
        """A rule's verdict; sure as decisive rules measured on held-out releases unless said.
        A user's own rule is their word on where such items belong: a fact, like a heading."""
        finer, _ = self._best_finer(scores, top)
        chosen = finer or top
        if scores.tops[top] >= USER_RULE:
            confidence = 1.0
        if confidence is None:
            model = self.model
            confidence = model.rule_sureness(top) if model is not None else RULE_CONFIDENCE
        return Verdict(chosen, "rule", confidence,
                       f"rule {scores.strongest_rule[chosen]!r} (score {scores.tops[top]:g})")

    def model_cues(self, words: str) -> list[str]:
        """What the model sees besides the words (the same at training and at run time)."""
        return self.rule_scores(words).cues(self.order)

    def _model_decision(self, model: SubsystemModel, scores: RuleScores, words: str,
                        repo: str | None = None) -> Verdict:
        found = [*features(words), *scores.cues(self.order)]
        prior = model.prior(repo)
        home = repo.lower() if repo is not None and prior is not None else None
        # The guess depends only on the features the model weighs, in order, and how many
        # there are: items differing in words it does not know ("Fix 1", "Fix 2") share it;
        # under a repository's prior, also on which areas the rules say the item names.
        weights = model.weights
        key = home, tuple([f for f in found
                           if f in weights or (home and f.startswith(RULE_CUE))]), len(found)
        verdict = self._guesses.get(key)
        if verdict is None:
            if len(self._guesses) >= GUESSES_KEPT:
                self._guesses.clear()
            guess = model.predict_features(found, prior)
            pulls = ", ".join(repr(f) for f in top_features(model, found, guess.subsystem))
            sure = f"p={guess.probability:.2f}" + (f", {home}'s prior" if home else "")
            reason = f"model ({sure})" + (f" from {pulls}" if pulls else "")
            ranked = [(name, round(p, 3)) for name, p in guess.ranked if p >= CANDIDATE_FLOOR]
            verdict = self._guesses[key] = Verdict(
                guess.subsystem, "model", guess.probability, reason,
                tuple(ranked[:MAX_CANDIDATES]) or ((guess.subsystem, round(guess.probability, 3)),),
            )
        return verdict.refined(*self._best_finer(scores, verdict.subsystem))

    def _by_text(self, words: str, repo: str | None = None) -> Verdict:
        """A decisive rule, unless the item names another subsystem's APIs (``api_verdict``);
        else the subsystem of the APIs it names, unless the model's best guess (its calibrated
        probability, from ``repo``'s prior) is surer; else that guess; with no model
        (measurements), the best-scoring rule, unmeasured."""
        scores = self.rule_scores(words)
        top = self.decisive(scores)

        def finer(top: str) -> str | None:
            return self._best_finer(scores, top)[0]

        if top is not None:
            # Against a decisive rule, only names written with their module count
            # (`nn.Module` in an item about AOTInductor is an aside).
            named = api_verdict(self.taxonomy.apis.named(words, written_only=True), finer)
            if named is not None and top_level(named.subsystem) != top:
                return named
            return self._rule_decision(scores, top)  # measured per subsystem: its sureness
        model = self.model
        if model is not None:
            apis = self.taxonomy.apis.named(words)
            named = api_verdict(apis, finer)
            guess = self._model_decision(model, scores, words, repo)
            # The APIs an item names place it before the model does, unless the model is
            # surer (its calibrated probability) than such a placement is measured to be right.
            if named is not None and guess.confidence <= named.confidence:
                return named
            return with_apis(guess, apis)
        rule_top, _ = scores.best(self.order)
        if rule_top is not None:
            return self._rule_decision(scores, rule_top, confidence=0.0)
        return Verdict("other", "rule", 0.0, "no heading or rule matched")
