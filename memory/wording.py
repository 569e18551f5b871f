"""Words as the truth gate compares them: content-word stems, clauses, and what a negation covers.

Pure and deterministic. Stems are crude on purpose (a plural or -ing/-ed ending dropped, then the first
five letters), so "dilates" meets "dilator" and "pupillae" meets "pupil"; numbers are kept whole.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

_STOP_WORDS = """a an the and or but if then than that this these those there here of to in on at by for from with as
    is are was were be been being am do does did done has have had having can could may might must shall
    should will would it its it's they them their he she his her him we our you your i me my mine which who
    whom whose what when where why how all any each every some such so very also only just more most much
    many other another same both either into onto over under about above below between after before again
    further once up down out off own too yes ok okay please thank thanks well let lets one two first
    answer answers answered accepted accept correct correctly right rightly option options question
    questions asked asks ask user users expert experts assistant chatbot said says say stated states state
    fact facts memory true false wrong incorrect mistake mistakes avoid avoided topic regarding because
    therefore thus hence given since while whereas like unlike per via use using case cases following
    choose chosen choice pick best most likely look again sure indeed actually really think know
    wants want prefers prefer expects expect writes write means mean refers refer term terms abbreviation
    called calls mentions mentioned wonders wondered asking interested corrected correction corrects
    clarified clarifies explained explains noted notes pointed points confirmed confirms told tells
    insists insisted agreed agrees disagreed emphasized not never cannot neither nor without none"""
_STOP = frozenset(_STOP_WORDS.split())
NEGATION = re.compile(
    r"\b(?:not|no|never|cannot|neither|nor|without|none|instead|rather)\b|n't\b|\bn['’]t\b", re.IGNORECASE
)
# letters, digits and letters again make one code ("t2n0m0", "hba1c", "cyp2c9"): read as their digits,
# T2N0M0 and T0N2M0 were one thing. A name and a number ("IGF1", "CD4", "NPHS 2") split into both, so the
# forms with a hyphen or a space are the same words; so does a number with letters after it ("5mg", "2nd")
_WORD = re.compile(r"[a-z]+\d+[a-z][a-z\d]*|[a-z]+|\d+(?:\.\d+)?")
# a colon between digits is a ratio ("1:1000"), a full stop before a digit a decimal point: neither ends anything
_CLAUSE = re.compile(r"(?:[;!?\n]|(?<!\d):|:(?!\d)|\.(?!\d))+|,\s*(?=but\b|however\b)")
_SENTENCE = re.compile(r"(?<=[.?!])\s+")
SCOPE_END = re.compile(r"[,;!?\n]|(?<!\d):|:(?!\d)|\.(?!\d)")
CHUNK = re.compile(r"[,;!?\n]|(?<!\d):|:(?!\d)|\.(?!\d)")
SCOPE_WORDS = 6
_DASHES = frozenset({"-", "--", "–", "—"})
_AUXILIARIES = "is are was were be been do does did can could should would will may might must has have had"
_AUXILIARY = frozenset(_AUXILIARIES.split())
_CUE = re.compile(r"^(?:not|no|never|cannot|neither|nor|without|none|instead|rather|\w+n['’]t)$", re.IGNORECASE)
# "without" negates a noun phrase, which ends where its clause's verb begins: "categories without equal
# intervals make an ordinal scale" says "ordinal scale" (fresh30's truth-1072)
_PHRASE_VERBS = frozenset(
    (
        _AUXILIARIES + " make makes made give gives gave form forms formed mean means become becomes became"
        " define defines indicate indicates suggest suggests cause causes caused"
    ).split()
)


# what a negated verb inside a clause's subject denies ends where the main clause's copula begins: "The one
# lice don't transmit is Q fever" denies "transmit" of Q fever, and says nothing against Q fever itself, so a
# memory that Q fever is the answer to "which is not transmitted by lice" contradicts nothing (fresh31's
# truth-1092); unless a relative word opens what is negated ("doesn't cause what is called ..."). Which option
# such a sentence speaks for is another matter (:func:`positive_text` keeps Q fever in the scope: in a
# question that is not negative, "what doesn't belong is X" speaks against X)
_COPULAS = frozenset({"is", "are", "was", "were"})
_RELATIVES = frozenset({"what", "which", "that", "who", "whom", "where", "when", "how"})
_DO_BEFORE = re.compile(r"\b(?:do|does|did)\s*$", re.IGNORECASE)


# a pronoun and its verb open a new clause, whatever the negation before them covered: "with no nodes and no
# distant spread this is T2N0M0" denies nodes and spread, not T2N0M0 (fresh32's truth-1127)
_PRONOUNS = frozenset({"this", "it", "they", "these", "he", "she", "we"})
_PRONOUN_VERBS = frozenset({"it's", "it’s", "they're", "they’re", "he's", "she's"})


def _new_clause(words: list[str], j: int) -> bool:
    """Whether ``words[j]`` opens a clause of its own: a pronoun and its verb ("this is", "it's")."""
    word = words[j].lower().strip("\"'(")
    if word in _PRONOUN_VERBS:
        return True
    return word in _PRONOUNS and j + 1 < len(words) and words[j + 1].lower().strip(",;:.!?") in _AUXILIARY


def _main_verb(word: str, before: list[str]) -> bool:
    """Whether ``word``, after the negated verb phrase ``before``, is the copula of the main clause."""
    return word.lower() in _COPULAS and not any(w.lower() in _RELATIVES for w in before)


def positive_text(chunk: str) -> str:
    """A chunk without what it negates: the words in a negation's scope, and the subject of "X is not".

    A scope ends at a clause mark, a dash or "but" ("not PT but aPTT" says aPTT), and after six words at most;
    the scope of "without" also ends at its clause's verb.
    """
    words = chunk.split()
    dropped: set[int] = set()
    for i, word in enumerate(words):
        if not _CUE.match(word.strip(",;:.!?()\"'")):
            continue
        dropped.add(i)
        for j in range(i + 1, min(len(words), i + 1 + SCOPE_WORDS)):
            if words[j].lower() == "but" or words[j] in _DASHES:  # "not PT but aPTT", "not X — Y": Y is said
                break
            if word.lower() == "without" and j > i + 1 and words[j].lower() in _PHRASE_VERBS:
                break
            if j > i + 1 and _new_clause(words, j):
                break
            dropped.add(j)
            if SCOPE_END.search(words[j]):
                break
        before = i - 1
        if before >= 0 and words[before].lower() in _AUXILIARY:  # "X is not ...", "X does not ..."
            dropped.update(range(_subject_start(words, before), before + 1))
        elif word.lower() in {"cannot"} or word.lower().endswith(("n't", "n’t")):
            dropped.update(range(_subject_start(words, i), i))
    return " ".join(w for i, w in enumerate(words) if i not in dropped)


# words that open a clause of their own before a negated verb: "Paracetamol is safe but aspirin is not"
_OPENERS = "but whereas while although though because as since so hence therefore thus which who that where when if"
_CLAUSE_OPENERS = frozenset([*_OPENERS.split(), "unless", "then"])
SUBJECT_WORDS = 12
_PREPOSITIONS = frozenset(["in", "with", "for", "among", "during", "after", "before", "on", "at", "by", "from"])
_DETERMINERS = frozenset(["the", "a", "an", "its", "his", "her", "their", "this", "these", "those"])


def _subject_start(words: list[str], verb: int) -> int:
    """Where the subject of the verb at ``verb`` begins: after the last clause opener, twelve words at most.

    "tumour markers and bone scans in an asymptomatic patient are not recommended" denies the scans too
    (fresh33's truth-1163: three words back kept "bone scans" as said, and the rejected option was stored).
    """
    start = max(0, verb - SUBJECT_WORDS)
    for k in range(verb - 1, start - 1, -1):
        if _bare(words[k]) in _CLAUSE_OPENERS:
            start = k + 1
            break
    if start < verb and _bare(words[start]) in _PREPOSITIONS:
        # "In hypoplastic left heart syndrome the little left ventricle can't ...": the opening phrase is where,
        # not what; the subject begins at its determiner (fresh15's truth-564), else three words back
        article = next((k for k in range(start + 1, verb) if _bare(words[k]) in _DETERMINERS), None)
        return article if article is not None else max(start, verb - 3)
    return start


def _bare(word: str) -> str:
    return word.lower().strip(",;:.!?()\"'")


def stems(text: str) -> list[str]:
    """Content-word stems of ``text`` in order (numbers and codes whole, words cut to five letters)."""
    return [w if exact(w) else w[:5] for w in words(text)]


def exact(word: str) -> bool:
    """Whether a word of :func:`words` is a number or a code ("2.5", "t2n0m0"): it matches only itself."""
    return any(c.isdigit() for c in word)


def fold(text: str) -> str:
    """``text`` in lower case with accents dropped ("Lefèvre" is "lefevre")."""
    text = text.lower()
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def words(text: str) -> list[str]:
    """Content words of ``text`` in order, accents dropped, with plural, "-ing"/"-ed" and "-ies"/"-ied" endings cut."""
    out = []
    for word in _WORD.findall(fold(text)):
        if exact(word):
            out.append(word)
        elif len(word) > 2 and word not in _STOP:
            out.append(_unsuffix(word))
    return out


def short_words(text: str) -> list[str]:
    """Two-letter tokens of ``text`` that are not common words ("Sv", "cd"): :func:`words` drops them."""
    return [w for w in _WORD.findall(fold(text)) if len(w) == 2 and not exact(w) and w not in _STOP]


def _unsuffix(word: str) -> str:
    if len(word) > 4 and word.endswith(("ies", "ied")):  # "carries", "carried": "carry"
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if len(word) - len(suffix) >= 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def normal(text: str) -> str:
    """Lower-case words and numbers joined by single spaces (to find copies)."""
    return " ".join(_WORD.findall(fold(text)))


def stemset(texts: Iterable[str]) -> set[str]:
    """Every stem of every text."""
    return {s for text in texts for s in stems(text)}


def sentences(text: str) -> list[str]:
    """``text`` cut after each full stop, question or exclamation mark that a space follows."""
    return [s for s in _SENTENCE.split(text) if s.strip()]


def clauses(text: str) -> list[str]:
    """``text`` cut into clauses at sentence ends, colons, semicolons and ", but"."""
    return [c.strip() for c in _CLAUSE.split(text) if c.strip()]


def negated_spans(text: str) -> list[str]:
    """The text in the scope of each negation cue: up to the next punctuation, a dash or "but", six words at most.

    As in :func:`positive_text`, "not the pharyngeal plexus - tensor veli palatini is the trigeminal one"
    negates the plexus, not what follows the dash (fresh25's truth-908).
    """
    out: list[str] = []
    for cue in NEGATION.finditer(text):
        rest = text[cue.end() :]
        end = SCOPE_END.search(rest.lstrip())
        scope = (rest.lstrip()[: end.start()] if end else rest).split()[:SCOPE_WORDS]
        # a negated verb ("don't transmit", "do not transmit", "isn't absorbed"), not a negated noun ("no nodes")
        verb = cue.group(0).lower() in {"n't", "n’t"} or bool(_DO_BEFORE.search(text[: cue.start()]))
        cut = next(
            (
                i
                for i, w in enumerate(scope)
                if w.lower() == "but"
                or w in _DASHES
                or (verb and i > 0 and _main_verb(w, scope[:i]))
                or (i > 0 and _new_clause(scope, i))
            ),
            len(scope),
        )
        out.append(" ".join(scope[:cut]))
    return out


def negated_stems(text: str) -> set[str]:
    """Stems in the scope of a negation cue."""
    return {s for span in negated_spans(text) for s in stems(span)}


def asserted_stems(text: str) -> set[str]:
    """Stems a text asserts positively (outside its own negations)."""
    return set(stems(text)) - negated_stems(text)


def negation_subject(clause: str) -> set[str]:
    """Content stems of the (up to four) words before the first negation cue: what is said not to be."""
    cue = NEGATION.search(clause)
    if cue is None:
        return set()
    return set(stems(" ".join(clause[: cue.start()].split()[-4:])))


# words a finished sentence does not end on: a memory ending "... cross to the baby and." was cut off
_DANGLING = frozenset(["a", "an", "the", "and", "or", "but", "nor", "so", "which", "because", "its", "their"])


def mend_cut(text: str) -> str:
    """``text`` with a cut-off ending marked as such: "... to the baby and." becomes "... to the baby...".

    A clause mark before the full stop (";.", ",.") is dropped; a last word no sentence ends on is
    replaced by "...", as a text cut short is marked elsewhere. Anything else is returned as it is.
    """
    mended = re.sub(r"\s*[;,:]\s*\.$", ".", text.rstrip())
    last = re.search(r"\s+([A-Za-z]+)\.$", mended)
    if last and last.group(1) in _DANGLING:  # lower case: "Give vitamin A." ends on a name
        mended = mended[: last.start()].rstrip(" ,;:") + "..."
    return mended
