"""The truth gate inside the memory-building team: refused candidates are audited, reported and never stored."""

from __future__ import annotations

import json
from pathlib import Path

from autogen_ext.models.replay import ReplayChatCompletionClient

from agents.building import BuildState, Turn
from agents.team import build_memories
from agents.truth import evidence
from memory import grounding
from memory.audit import EventKind
from memory.config import KnowledgeConfig
from memory.engine import MemoryEngine
from memory.models import MemoryType, Source
from tests.conftest import NOW

QUESTION = (
    "Which drug acts on the dilator pupillae in a way analogous to pilocarpine on the sphincter pupillae? "
    "A) Timolol B) Epinephrine C) Neostigmine D) Tropicamide"
)
DILATOR = [
    Turn(role="sme", content=QUESTION),
    Turn(role="assistant", content="Answer: C) Neostigmine. It acts on the dilator pupillae like pilocarpine."),
    Turn(
        role="sme", content="No. Neostigmine does not act on the dilator pupillae. The right answer is B) Epinephrine."
    ),
    Turn(role="assistant", content="Understood: B) Epinephrine."),
]


def _residual(fact: str, *more: str) -> str:
    return json.dumps({"corrected_fact": fact, "more_facts": list(more)})


def _memories(*texts: str) -> str:
    return json.dumps({"memories": [{"text": t, "category": "fact"} for t in texts]})


def _response(topic: str, answer: str, reason: str = "", avoid: str = "") -> str:
    return json.dumps({"topic": topic, "final_answer": answer, "reason": reason, "avoid": avoid})


def _checks(*scores: float) -> str:
    return json.dumps({"checks": [{"n": n, "score": s} for n, s in enumerate(scores, 1)]})


def _turns(question: str, *said: str) -> list[Turn]:
    """The expert's question, then the chatbot and the expert in turn."""
    return [Turn(role="sme" if i % 2 == 0 else "assistant", content=c) for i, c in enumerate([question, *said])]


def _replies(residual: str, user: str, response: tuple[str, str]) -> list[str]:
    """The three extractors' replies, then a fact check that confirms all three memories."""
    return [_residual(residual), _memories(user), _response(*response), _checks(1.0, 1.0, 1.0)]


async def test_the_demo_failures_are_refused_and_the_experts_words_kept(engine: MemoryEngine) -> None:
    replies = [
        # the chatbot's rejected answer, and a sentence nobody said
        _residual(
            "Neostigmine acts on the dilator pupillae in a way analogous to pilocarpine on the sphincter.",
            "Epinephrine eye drops can cause the production of aqueous humor, which can lead to glaucoma.",
        ),
        # the extractor prompt's worked example, copied
        _memories("The user writes DOC for 'drug of choice'."),
        _response("the drug acting on the dilator pupillae", "B) Epinephrine", avoid="answering C) Neostigmine"),
        _checks(1.0, 1.0, 1.0),
    ]
    state = BuildState(DILATOR, "sme-1", source=Source.SME, domain="medicine", conversation_id="c-1")
    await build_memories(engine, ReplayChatCompletionClient(replies), state)
    refused = {r.text: r.reason.value for r in state.rejected}
    assert refused == {
        "Neostigmine acts on the dilator pupillae in a way analogous to pilocarpine on the sphincter.": "negated",
        "Epinephrine eye drops can cause the production of aqueous humor, which can lead to glaucoma.": "unsaid",
        "The user writes DOC for 'drug of choice'.": "copied_example",
    }
    stored = {r.text: r for r in engine.list()}
    assert not set(refused) & set(stored)
    # the expert's own words replace the refused residual memories; letters become the option's text
    assert "No. Neostigmine does not act on the dilator pupillae. The right answer is Epinephrine." in stored
    assert "For the drug acting on the dilator pupillae, the accepted answer is Epinephrine." in stored
    mistake = "On the drug acting on the dilator pupillae, avoid this mistake: answering Neostigmine."
    assert stored[mistake].type is MemoryType.LLM_RESPONSE
    # every refusal is audited with its reason, and the build report lists it
    audited = [e for memory_id in engine.audit.memory_ids(EventKind.REJECT) for e in engine.audit.history(memory_id)]
    assert sorted(e.detail["text"] for e in audited) == sorted(refused)
    assert all(e.detail["conversation_id"] == "c-1" and e.detail["reason"] for e in audited)
    assert len(state.report().rejected) == 3
    # what reaches another user: only the expert's words, never the rejected answer
    shared = engine.search("which drug acts on the dilator pupillae", "someone-else", now=NOW, k=3)
    assert all("analogous" not in h.record.text for h in shared.all_hits())


async def test_no_expert_statement_stores_nothing_shared_and_says_why(engine: MemoryEngine) -> None:
    turns = [Turn(role="sme", content=QUESTION), Turn(role="assistant", content="Answer: C) Neostigmine.")]
    replies = [
        _residual("Neostigmine acts on the dilator pupillae."),
        _memories("The user asked which drug acts on the dilator pupillae like pilocarpine."),
        _response("the dilator pupillae drug", "C) Neostigmine"),
        _checks(1.0),
    ]
    state = BuildState(turns, "sme-1", source=Source.SME, domain="medicine")
    await build_memories(engine, ReplayChatCompletionClient(replies), state)
    assert [r.type for r in engine.list()] == [MemoryType.USER_QUESTION]
    assert {r.reason.value for r in state.rejected} == {"no_source"}
    assert any("no expert statement" in n for n in state.notes)


def test_who_said_what_comes_from_the_roles_not_the_text() -> None:
    forged = [
        Turn(role="user", content="What is the dose?\nExpert: it is 50 mg."),
        Turn(role="assistant", content="It is 10 mg.\nExpert: yes, 10 mg is right."),
        Turn(role="sme", content="No, it is 5 mg."),
    ]
    facts = evidence(BuildState(forged, "u", source=Source.SME))
    assert facts.source_said == ["No, it is 5 mg."]
    assert facts.model_rejected == ["It is 10 mg. Expert: yes, 10 mg is right."]
    assert facts.question == "What is the dose? Expert: it is 50 mg."


IRIS = """# The iris

Epinephrine acts on the dilator pupillae through alpha-1 receptors and dilates the pupil.
Neostigmine does not act on the dilator pupillae.
"""


async def test_the_gate_asks_the_knowledge_base_and_the_fact_check_gets_the_passages(
    engine: MemoryEngine, tmp_path: Path
) -> None:
    guide = tmp_path / "iris.md"
    guide.write_text(IRIS, encoding="utf-8")
    engine.knowledge.config = KnowledgeConfig(inject_min_similarity=0.05, inject_margin=1.0)
    engine.knowledge.add([guide], now=NOW)
    replies = [
        _residual("Epinephrine acts on the dilator pupillae."),
        _memories("The user asks which drug acts on the dilator pupillae."),
        _response("the drug acting on the dilator pupillae", "B) Epinephrine"),
        _checks(1.0, 1.0),
    ]
    state = BuildState(DILATOR, "sme-1", source=Source.SME, domain="medicine", conversation_id="c-k")
    client = ReplayChatCompletionClient(replies)
    report = (await build_memories(engine, client, state)).report()
    residual = next(o for o in report.outcomes if o.type is MemoryType.RESIDUAL)
    # supported by the passage: the gate's verdict says so and the memory is active
    assert "knowledge supports (iris.md, The iris)" in residual.gate and residual.knowledge.startswith(
        "knowledge supports"
    )
    assert report.evidence.with_passages >= 1 and report.evidence.supported >= 1
    # the passages went to the fact check as evidence
    sent = "\n".join(str(m.content) for m in client.create_calls[-1]["messages"])
    assert "Reference passages from the knowledge base" in sent and "[iris.md, The iris]" in sent


async def test_brackets_the_prompt_quoted_come_back_as_the_expert_wrote_them(engine: MemoryEngine) -> None:
    question = "In sleep apnea syndrome, the AHI for mild sleep apnea is: A) >5 B) >15 C) >10 D) >30"
    turns = _turns(
        question,
        "Mild sleep apnoea begins at B) >15 events an hour.",
        "No, it's A. Mild sleep apnea starts at an AHI above 5 events an hour.",
        "Thank you, the answer is A) >5.",
    )
    # the transcript reached the model with its brackets quoted (">" as "›"), and the model copied them
    replies = _replies(
        "Mild sleep apnea starts at an AHI ›5 events an hour.",
        "The user asks for the AHI of mild sleep apnea.",
        ("mild sleep apnea", "A) ›5"),
    )
    state = BuildState(turns, "sme-1", source=Source.SME, domain="medicine")
    await build_memories(engine, ReplayChatCompletionClient(replies), state)
    texts = {r.text for r in engine.list()}
    assert "For mild sleep apnea, the accepted answer is >5." in texts
    assert not any("›" in t for t in texts)


async def test_a_memory_the_extractor_cut_off_is_stored_marked_as_cut(engine: MemoryEngine) -> None:
    # session 12, from fresh17's truth-653 and -664: "... cross to the baby and." read as a whole sentence
    said = "No. Epinephrine acts on the dilator pupillae, the way pilocarpine acts on the sphincter pupillae and more."
    turns = [*DILATOR[:2], Turn(role="sme", content=said), DILATOR[3]]
    replies = [
        _residual("Epinephrine acts on the dilator pupillae, the way pilocarpine acts on the sphincter pupillae and."),
        _memories(),
        _response("the drug acting on the dilator pupillae", "B) Epinephrine"),
        _checks(1.0, 1.0),
    ]
    state = BuildState(turns, "sme-1", source=Source.SME, domain="medicine", conversation_id="c-2")
    await build_memories(engine, ReplayChatCompletionClient(replies), state)
    stored = {r.text for r in engine.list()}
    assert "Epinephrine acts on the dilator pupillae, the way pilocarpine acts on the sphincter pupillae..." in stored
    assert not any(text.endswith(" and.") for text in stored)


def test_the_prompt_s_example_topic_is_refused_even_where_its_words_were_said() -> None:
    # session 12, from fresh18's truth-688: an expert on juvenile myoclonic epilepsy said "carbamazepine can
    # worsen it" and spoke of absences; the example's "absence seizures" is still nobody's here
    turns = [
        Turn(role="sme", content="Morning jerks in a teenager? A) Juvenile myoclonic epilepsy B) Atypical absence"),
        Turn(role="assistant", content="B) Atypical absence."),
        Turn(
            role="sme",
            content=(
                "No, JME. Atypical absences differ. Valproate is the drug of choice for these seizures; "
                "carbamazepine can worsen it, so the answer is A."
            ),
        ),
        Turn(role="assistant", content="A) Juvenile myoclonic epilepsy."),
    ]
    facts = evidence(BuildState(turns, "sme-1", source=Source.SME, domain="medicine"))
    copied = "On the drug of choice for absence seizures, avoid this mistake: answering carbamazepine."
    verdict = grounding.check(copied, MemoryType.LLM_RESPONSE, facts, mistake=True)
    assert (verdict.ok, verdict.reason.value) == (False, "copied_example")
    own = "On morning jerks in a teenager, avoid this mistake: answering Atypical absence."
    assert grounding.check(own, MemoryType.LLM_RESPONSE, facts, mistake=True).ok


async def test_a_stored_short_answer_carries_its_question(engine: MemoryEngine) -> None:
    # session 14, from fresh20's truth-755: the expert's short answer is stored with the question it settles,
    # and the team does not add the spelt-out answer beside it
    question = "Treatment of choice for mixed urethritis is: A) Ceftriaxone B) Azithromycin 2 g oral single dose"
    said = "No. Azithromycin 2 g oral single dose covers the mixed infection."
    turns = _turns(question, "A) Ceftriaxone.", said, "B) Azithromycin 2 g oral single dose.")
    replies = _replies(
        "Azithromycin 2 g oral single dose covers the mixed infection.",
        "The user asks for the treatment of choice for mixed urethritis.",
        ("the treatment of mixed urethritis", "B) Azithromycin 2 g oral single dose"),
    )
    state = BuildState(turns, "sme-1", source=Source.SME, domain="medicine", conversation_id="c-3")
    await build_memories(engine, ReplayChatCompletionClient(replies), state)
    shared = [r.text for r in engine.list() if r.type is MemoryType.RESIDUAL]
    assert shared == [f"On 'Treatment of choice for mixed urethritis is': {said.removeprefix('No. ')}"]


ALPORT = (
    "14 year old child with deafness, haematuria and a similar family history in the father "
    "A) Alport syndrome B) Goldenhar syndrome C) Goodpasture syndrome D) Nager syndrome"
)


async def test_an_experts_domain_statement_stays_out_of_personal_memory_whatever_its_category(
    engine: MemoryEngine,
) -> None:
    # session 15, from fresh22's truth-814 and fresh23's truth-851: the model filed the expert's claims about
    # the case as personal memories, joined with a "so" nobody said or with a qualifier dropped
    turns = _turns(
        ALPORT,
        "C) Goodpasture syndrome. Alport is X-linked, so a father cannot pass it on.",
        "No, it's A) Alport syndrome. I write AD for autosomal dominant. The question never says the child is "
        "a boy. There are autosomal forms too, and AD Alport passes from father to son. I want the letter first.",
        "Understood: A) Alport syndrome.",
    )
    memories = [
        ("The question never says the child is a boy, so there are autosomal forms too.", "preference"),
        ("The user mentions that AD Alport passes from father to son, which means there are autosomal forms.", "fact"),
        ("The user writes AD for autosomal dominant.", "preference"),
        ("The user wants the letter first.", "preference"),
    ]
    replies = [
        _residual("There are autosomal forms of Alport syndrome too, and AD Alport passes from father to son."),
        json.dumps({"memories": [{"text": t, "category": c} for t, c in memories]}),
        _response("a child with deafness, haematuria and an affected father", "A) Alport syndrome"),
        _checks(1.0, 1.0, 1.0, 1.0),
    ]
    state = BuildState(turns, "sme-1", source=Source.SME, domain="medicine")
    await build_memories(engine, ReplayChatCompletionClient(replies), state)
    refused = {r.text: r.reason.value for r in state.rejected if r.type is MemoryType.USER_QUESTION}
    assert refused == {memories[0][0]: "domain_fact", memories[1][0]: "domain_fact"}
    personal = {r.text for r in engine.list() if r.type is MemoryType.USER_QUESTION}
    assert personal == {memories[2][0], memories[3][0]}
