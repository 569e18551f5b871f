"""The truth gate on memories whose every word was said, but not as the memory says it.

A denial of what the expert asserted, the expert's sentence about a rejected option said of the accepted
one, and a user memory that reports a question or an agreement the user never made (session 10, from
fresh11's truth-428, -429, -427 and -442, written here in other words).
"""

from __future__ import annotations

from memory.grounding import Evidence, GateReason, GateVerdict, check, named_options
from memory.models import MemoryType
from tests.memory.corrections import rejected_then_accepted

R, Q, L = MemoryType.RESIDUAL, MemoryType.USER_QUESTION, MemoryType.LLM_RESPONSE


def refused(text: str, kind: MemoryType, facts: Evidence, reason: GateReason) -> GateVerdict:
    """The gate's verdict on ``text``, checked to be a refusal for ``reason``."""
    verdict = check(text, kind, facts)
    assert (verdict.ok, verdict.reason) == (False, reason), (text, verdict)
    return verdict


FOLATE = (
    "Which enzyme does not need vitamin B12? A) Methionine synthase B) Methylmalonyl-CoA mutase "
    "C) Thymidylate synthase D) Leucine aminomutase"
)
FOLATE_SAID = (
    "Methylmalonyl-CoA mutase uses adenosylcobalamin, so it is a B12 enzyme. "
    "Methionine synthase needs vitamin B12 too, as methylcobalamin. Thymidylate synthase works with a folate cofactor."
)
FOLATE_WRONG = "B) Methylmalonyl-CoA mutase. It runs on biotin."


def folate() -> Evidence:
    return rejected_then_accepted(FOLATE, FOLATE_WRONG, [FOLATE_SAID], "I see. C) Thymidylate synthase.")


def test_a_memory_may_not_deny_what_the_expert_asserted() -> None:
    denial = "B12 is a cofactor for methionine synthase, but not for methylmalonyl-CoA mutase or thymidylate synthase."
    verdict = refused(denial, R, folate(), GateReason.NEGATED)
    assert "adenosylcobalamin" in verdict.detail
    # the expert's own assertions, and a denial the expert made too, pass
    assert check("Methylmalonyl-CoA mutase uses adenosylcobalamin and is a B12 enzyme.", R, folate()).ok
    assert check("Thymidylate synthase works with a folate cofactor, not with B12.", R, folate()).ok


def test_a_denial_the_question_makes_is_not_held_against_the_memory() -> None:
    # "does not need vitamin B12" is the question's own negation; the expert says B12 enzymes "use" it
    answer = "For the question 'Which enzyme does not need vitamin B12', the answer is Thymidylate synthase."
    assert check(answer, L, folate()).ok


LDL = (
    "LDL is very high and the LDL receptors are normal. The most likely cause? A) Receptor phosphorylation "
    "B) Lipoprotein lipase deficiency C) Apo B-100 mutation D) ACAT deficiency"
)
LDL_SAID = (
    "Lipoprotein lipase deficiency causes type I hyperlipoproteinaemia, with chylomicrons and triglycerides "
    "piling up while LDL stays low. With normal receptors the defect is in the ligand: an apo B-100 mutation "
    "stops LDL from binding its receptor."
)
LDL_WRONG = "B) Lipoprotein lipase deficiency, since lipoproteins then accumulate."


def ldl() -> Evidence:
    return rejected_then_accepted(LDL, LDL_WRONG, [LDL_SAID], "Thanks. C) Apo B-100 mutation.")


def test_what_the_expert_said_of_a_rejected_option_is_not_said_of_the_accepted_one() -> None:
    swapped = "Apo B-100 mutation causes type I hyperlipoproteinaemia, with chylomicrons and triglycerides piling up."
    for kind in (R, L):
        verdict = refused(swapped, kind, ldl(), GateReason.SWAPPED_SUBJECT)
        assert "Lipoprotein lipase deficiency causes" in verdict.detail
    # said of its own subject, or of the accepted option in the expert's words about it, it passes
    assert check("Lipoprotein lipase deficiency causes type I hyperlipoproteinaemia with chylomicrons.", R, ldl()).ok
    assert check("An apo B-100 mutation stops LDL from binding its receptor, which stays normal.", R, ldl()).ok


FLOW = "What does forward scatter in flow cytometry measure? A) Cell death B) Cell size C) Granularity D) DNA content"
FLOW_SAID = [
    "No, granularity is read from side scatter. You're right that viability needs a propidium iodide dye, though.",
    "Forward scatter grows with the size of the cell. Who taught you that it shows death?",
]
FLOW_WRONG = "C) Granularity."


def flow() -> Evidence:
    return rejected_then_accepted(FLOW, FLOW_WRONG, FLOW_SAID, "So B) Cell size.")


def test_a_user_memory_reports_only_a_question_the_user_asked() -> None:
    assert check("The user asks what forward scatter in flow cytometry measures.", Q, flow()).ok
    # one option glued to the question, and a name the expert said in passing, were never asked
    for text in (
        "The user asks if forward scatter measures cell death.",
        "The user asks about the propidium iodide dye.",
    ):
        refused(text, Q, flow(), GateReason.MISREPORTED)
    assert "A) Cell death" in check("The user asks if forward scatter measures cell death.", Q, flow()).unsupported
    # a later question of the user's own counts ("Who taught you that it shows death?")
    assert check("The user asks who taught that forward scatter shows death.", Q, flow()).ok


def test_a_user_memory_reports_only_an_agreement_the_user_made() -> None:
    assert check("The user agrees that viability needs a dye.", Q, flow()).ok
    refused("The user agrees that side scatter grows with the size of the cell.", Q, flow(), GateReason.MISREPORTED)
    # "asked" inside what the user reported is not a report of asking
    said = "The sister will be asked for a glucose test."
    facts = Evidence(
        question="What should we test first? A) Glucose B) Calcium",
        user_said=["What should we test first? A) Glucose B) Calcium", said],
    )
    assert check("The user mentions that the sister will be asked for a glucose test.", Q, facts).ok


SEALER = "Which sealer is UDMA resin based? A) EndoREZ B) RealSeal C) Sealapex D) Tubli-Seal"
SEALER_SAID = (
    "RealSeal belongs to the Resilon system. The UDMA one is EndoREZ. It is hydrophilic, so it copes with a "
    "damp canal, and it goes with resin-coated gutta-percha cones."
)


def test_what_a_pronoun_said_of_one_option_is_not_said_of_another() -> None:
    facts = rejected_then_accepted(SEALER, "B) RealSeal.", [SEALER_SAID], "So A) EndoREZ.")
    swapped = "RealSeal is Resilon's, and it is hydrophilic, so it copes with a damp canal, with gutta-percha cones."
    verdict = refused(swapped, R, facts, GateReason.SWAPPED_SUBJECT)
    assert "It is hydrophilic" in verdict.detail
    assert check("EndoREZ is hydrophilic, so it copes with a damp canal.", R, facts).ok


def test_words_only_the_chatbot_said_in_its_thanks_are_not_the_expert_s() -> None:
    question = "PDGF in vessels is released from: A) Endothelium B) Fibroblasts C) Macrophages D) Alpha granules"
    said = "Macrophages make some PDGF, but the store is the alpha granule. Dense granules hold ADP and serotonin."
    facts = rejected_then_accepted(question, "C) Macrophages.", [said], "I had the local producers in mind. D).")
    verdict = refused(
        "The local producers of PDGF are the alpha granules, which hold ADP and serotonin.",
        R,
        facts,
        GateReason.MODEL_WORDS,
    )
    assert {"local", "produ"} <= set(verdict.unsupported)


def test_a_claim_pieced_together_from_words_said_apart_is_nobody_s() -> None:
    question = "CKD with vomiting: pH 7.40, HCO3 25, Na 145, Cl 100. A) Normal B) High gap acidosis with alkalosis"
    said = [
        "Work out the gap first: 145 minus the sum of 100 and 25 is 20. Chloride is the 100.",
        "The bicarbonate should have fallen with that acidosis. Opposing disorders offset each other, which is "
        "why you calculate the gap every time.",
    ]
    facts = rejected_then_accepted(question, "A) Normal.", said, "B) High gap acidosis with alkalosis.")
    pieced = "The gap is calculated from the sum of chloride and bicarbonate."  # four words from four sentences
    verdict = refused(pieced, R, facts, GateReason.UNSAID)
    assert "pieced together" in verdict.detail
    assert check("Opposing disorders offset each other, which is why you calculate the gap every time.", R, facts).ok


def test_a_sentence_joined_from_what_was_said_of_two_subjects_is_refused() -> None:
    question = "The characteristic adverse effect of ECT: A) Anterograde amnesia B) Retrograde amnesia C) Mania"
    said = [
        "The commonest complaint is retrograde amnesia, the loss of memories from the weeks before the course. "
        "Trouble forming new memories happens too, but it clears within weeks of the last session. "
        "Retrograde amnesia is also what patients carry longest."
    ]
    facts = rejected_then_accepted(question, "A) Anterograde amnesia.", said, "B) Retrograde amnesia.")
    # what clears within weeks is the trouble forming new memories, in a sentence naming no option
    joined = "Retrograde amnesia is the commonest complaint and clears within weeks of the last session."
    verdict = refused(joined, R, facts, GateReason.UNSAID)
    assert "pieced together" in verdict.detail
    # one sentence restated, or two about the same option, pass; so does "carries" said as "carry"
    assert check("Trouble forming new memories clears within weeks of the last session.", R, facts).ok
    assert check("Retrograde amnesia, the commonest complaint, is what a patient carries longest.", R, facts).ok


def test_a_name_written_with_an_accent_names_the_option() -> None:
    options = {"A": "Papillon lefevre syndrome", "B": "Menke syndrome"}
    assert named_options("Papillon-Lefèvre gives calcification of the falx.", options) == {"A"}


HBV = "A mother is HBsAg positive and anti-HBe positive. Risk of transmission of Hep. B in child is: A) 20% B) 90%"


def test_an_answer_without_the_case_the_question_sets_out_is_refused() -> None:
    said = "Anti-HBe means low replication, but she still carries the virus: about 20%, not 90%."
    facts = rejected_then_accepted(HBV, "B) 90%.", [said], "A) 20%.")
    refused("The risk of transmission of Hep. B in child is 20%.", R, facts, GateReason.NO_TOPIC)
    assert check("For a mother HBsAg and anti-HBe positive, the risk of transmission to the child is 20%.", R, facts).ok


def test_a_quiz_question_is_not_reported_as_the_user_s_own_statement() -> None:
    question = "Sorting head-injury patients by need of care and resources is: A) Triage B) Emergency care"
    facts = rejected_then_accepted(question, "B) Emergency care.", ["It's A."], "A) Triage.")
    refused("The user states that they need to sort head-injury patients.", Q, facts, GateReason.MISREPORTED)
    # the user's own answer to the quiz is theirs, and so is what they asked
    assert check("The user says that sorting head-injury patients by need of care is triage.", Q, facts).ok
    assert check("The user asks about sorting head-injury patients by need of care.", Q, facts).ok


def test_a_memory_does_not_mix_what_the_expert_said_of_two_options() -> None:
    question = (
        "Valve lesion most often due to infarction: A) Aortic stenosis B) Mitral stenosis C) Mitral regurgitation"
    )
    said = (
        "A ruptured papillary muscle lets the leaflets flop back, so the lesion is mitral regurgitation. "
        "Mitral stenosis is nearly always rheumatic, with fused commissures."
    )
    facts = rejected_then_accepted(question, "B) Mitral stenosis.", [said], "C) Mitral regurgitation.")
    mixed = "Mitral regurgitation comes from a ruptured papillary muscle and is nearly always rheumatic."
    verdict = refused(mixed, R, facts, GateReason.SWAPPED_SUBJECT)
    assert "B) Mitral stenosis" in verdict.detail
    assert check("Mitral regurgitation comes from a ruptured papillary muscle.", R, facts).ok
    assert check("Mitral stenosis is nearly always rheumatic, with fused commissures.", R, facts).ok


def test_a_user_memory_may_not_join_what_the_user_said_apart_nor_keep_a_bare_letter() -> None:
    # session 11, from fresh14's truth-560 and -535, in other words
    question = "'Store in a cool place' on a label means: A) 8-15 C B) 2-8 C C) 0 C D) 30 C"
    said = [
        "No, 2 to 8 is what 'keep in a fridge' means.",
        "Deep-freeze storage is -25 to -10, and a cool place is 8 to 15.",
    ]
    facts = rejected_then_accepted(question, "B) 2-8 C.", said, "A) 8-15 C.")
    joined = "The user states that 'keep in a fridge' means storage at -25 to -10 degrees."
    assert "pieced together" in refused(joined, Q, facts, GateReason.UNSAID).detail
    assert check("The user states that deep-freeze storage is -25 to -10 degrees.", Q, facts).ok
    letter = rejected_then_accepted(question, "B) 2-8 C.", ["A, mate."], "A) 8-15 C.")
    refused("The user states that A, mate.", Q, letter, GateReason.NO_TOPIC)
    assert check(
        "The user is a pharmacist.", Q, rejected_then_accepted(question, "B)", ["I am a pharmacist. A."], "A)")
    ).ok


def test_the_chatbot_s_closing_summary_is_not_the_expert_s_claim() -> None:
    # session 11, from fresh14's truth-550, in other words
    question = "The calcium in a dentine bridge comes from: A) The blood supply B) The calcium hydroxide dressing"
    said = ["Tracer calcium put in the dressing never reached the bridge; calcium given into the blood did."]
    facts = rejected_then_accepted(
        question, "B) The calcium hydroxide dressing.", said, "So the dressing is only the trigger. A)"
    )
    copy = "The dressing is only the trigger. The blood supply, with calcium in the dressing never reaching the bridge."
    assert "chatbot's sentence" in refused(copy, R, facts, GateReason.MODEL_WORDS).detail
    # nor is its shorthand, though every word of it is the expert's
    shorthand = rejected_then_accepted(question, "B)", said, "Tracer in the dressing, not the bridge. A)")
    refused("Tracer in the dressing, not the bridge.", R, shorthand, GateReason.MODEL_WORDS)
    refused("Tracer in the dressing, not the bridge.", Q, shorthand, GateReason.MODEL_WORDS)  # nor the user's
    # a closing that restates one sentence of the expert's is the expert's claim
    restated = rejected_then_accepted(
        question, "B)", said, "Tracer calcium put in the dressing never reached the bridge."
    )
    assert check("Tracer calcium put in the dressing never reached the bridge.", R, restated).ok
    # session 12, from fresh16's truth-618: three of the expert's words, but a fraction of the sentence
    long_said = ["Tracer calcium put in the dressing never reached the bridge within six weeks in the dog studies."]
    fraction = rejected_then_accepted(question, "B)", long_said, "Tracer put in it never reached the bridge. A)")
    refused("Tracer put in it never reached the bridge.", R, fraction, GateReason.MODEL_WORDS)


def test_a_sentence_s_predicate_is_not_given_to_another_subject() -> None:
    # session 11, from truth-182 and fresh14's truth-558, in other words: the subjects need not be options
    question = (
        "Taste from the anterior two-thirds of the tongue travels in: A) Chorda tympani B) Glossopharyngeal nerve"
    )
    said = [
        "The chorda tympani does. Hyposmia is a reduced sense of smell, common after viral colds and head injuries."
    ]
    facts = rejected_then_accepted(question, "B) Glossopharyngeal nerve.", said, "A) Chorda tympani.")
    renamed = "Hypogeusia is a reduced sense of smell, common after viral colds and head injuries."
    assert "another subject" in refused(renamed, R, facts, GateReason.SWAPPED_SUBJECT).detail
    assert check("Hyposmia, a reduced sense of smell, is common after viral colds and head injuries.", R, facts).ok


def test_what_was_said_of_one_member_is_not_said_of_its_class() -> None:
    # session 12, from fresh15's truth-595, in other words
    question = "Which of these is not a diuretic? A) Furosemide B) Hydralazine C) Amiloride"
    said = ["Hydralazine is the odd one here: a direct vasodilator used in pregnancy-induced hypertension."]
    facts = rejected_then_accepted(question, "C) Amiloride.", said, "B) Hydralazine.")
    widened = "Direct vasodilators are used in pregnancy-induced hypertension."
    assert "whole class" in refused(widened, R, facts, GateReason.SWAPPED_SUBJECT).detail
    assert check("Hydralazine is a direct vasodilator used in pregnancy-induced hypertension.", R, facts).ok
    # a class the expert spoke of as a class is the expert's claim
    plural = rejected_then_accepted(question, "C)", ["Direct vasodilators are used in eclampsia."], "B)")
    assert check("Direct vasodilators are used in eclampsia.", R, plural).ok
    # nor is a narrower class, when what the memory says of it was said of a wider one (dev truth-275)
    bites = "Rabies vaccine is not needed after: A) Rat bite B) Dog bite"
    said = [
        "Rodent bites, in the national guidelines, are no indication for rabies vaccine. "
        "A rat bite needs washing with soap and water."
    ]
    narrower = rejected_then_accepted(bites, "B) Dog bite.", said, "A) Rat bite.")
    assert check("Rat bites are no indication for rabies vaccine.", R, narrower).ok


def test_the_expert_s_sentence_with_its_subject_swapped_is_not_the_expert_s() -> None:
    # session 12, from fresh17's truth-661 and -635, in other words
    question = "Digesting IgG with papain gives: A) 2 Fab and 1 Fc B) 1 F(ab')2"
    said = ["Right. Pepsin cuts on the far side of the hinge, leaving one F(ab')2 piece and Fc fragments."]
    facts = rejected_then_accepted(question, "B) 1 F(ab')2.", said, "A) 2 Fab and 1 Fc.")
    swapped = "Papain cuts on the far side of the hinge, leaving one F(ab')2 piece and Fc fragments."
    assert "another subject" in refused(swapped, R, facts, GateReason.SWAPPED_SUBJECT).detail
    assert check("Pepsin cuts on the far side of the hinge, leaving one F(ab')2 piece and Fc fragments.", R, facts).ok
    heat = "Malignant hyperthermia is triggered by: A) Propofol B) Succinylcholine"
    facts = rejected_then_accepted(
        heat,
        "A) Propofol.",
        ["Succinylcholine triggers it. It depolarises the end plate first. Dantrolene is the antidote."],
        "B)",
    )
    refused("Succinylcholine is the antidote for malignant hyperthermia.", R, facts, GateReason.SWAPPED_SUBJECT)
    # a pronoun replaced by what it stands for (the accepted option here) is the expert's sentence
    assert check("Succinylcholine depolarises the end plate first.", R, facts).ok


PORPHYRIA = (
    "A girl has abdominal pain and a seizure after a sulfa drug. Most likely? A) Acute intermittent porphyria "
    "B) Congenital erythropoietic porphyria C) Lead poisoning"
)


def test_an_option_s_initialism_names_it() -> None:
    facts = rejected_then_accepted(
        PORPHYRIA,
        "B) Congenital erythropoietic porphyria. Drugs set off porphyric attacks.",
        ["No. CEP gives blistering photosensitivity from infancy. Attacks after sulfa drugs mean the acute kind."],
        "A) Acute intermittent porphyria.",
    )
    assert named_options(
        "CEP gives blistering", {"A": "Acute intermittent porphyria", "B": "Congenital erythropoietic porphyria"}
    ) == {"B"}
    refused(
        "Acute intermittent porphyria gives blistering photosensitivity from infancy.",
        R,
        facts,
        GateReason.SWAPPED_SUBJECT,
    )


def test_the_chatbot_s_closing_line_with_another_article_is_still_the_chatbot_s() -> None:
    facts = rejected_then_accepted(
        "Which reflex slows the heart when the carotid sinus is pressed? A) Baroreceptor reflex B) Bainbridge reflex",
        "B) Bainbridge reflex. Stretch of the atria slows the heart.",
        ["No. It's the baroreceptor reflex: the sinus stretch receptors fire, and the vagus slows the heart."],
        "A stretch receptor in the sinus, then. A) Baroreceptor reflex.",
    )
    refused("The stretch receptor in the sinus, then. Baroreceptor reflex.", R, facts, GateReason.MODEL_WORDS)


def test_a_claim_the_expert_limited_to_a_group_is_not_said_for_everyone() -> None:
    facts = rejected_then_accepted(
        "Most common primary tumour behind choroidal metastases? A) Breast B) Ovary C) Cervix",
        "B) Ovary. It seeds the choroid through the blood.",
        ["No. In women breast carcinoma is by far the commonest primary behind choroidal deposits. Men: lung."],
        "A) Breast.",
    )
    refused(
        "Breast carcinoma is by far the commonest primary behind choroidal deposits.",
        R,
        facts,
        GateReason.SWAPPED_SUBJECT,
    )
    assert check("In women breast carcinoma is by far the commonest primary behind choroidal deposits.", R, facts).ok


def test_the_chatbot_s_sentence_with_the_accepted_option_put_in_is_still_the_chatbot_s() -> None:
    # session 15, from fresh24's truth-879, written here in other words: the rejected definition, answer swapped
    question = (
        "What is 'deaths before the first birthday per 1000 live births in a year' called? "
        "A) Infant mortality rate B) Child mortality rate C) Perinatal mortality rate D) Crude death rate"
    )
    chatbot = (
        "B) Child mortality rate. Any deaths of children tallied per 1000 live births give the child mortality rate."
    )
    said = ["No. Deaths under one year of age per 1000 live births in that year give the infant mortality rate."]
    facts = rejected_then_accepted(question, chatbot, said, "Thanks. A) Infant mortality rate.")
    swapped = "Any deaths of children tallied per 1000 live births give the infant mortality rate."
    verdict = refused(swapped, R, facts, GateReason.MODEL_WORDS)
    assert swapped in verdict.detail
    assert check(
        "Deaths under one year of age per 1000 live births in that year give the infant mortality rate.", R, facts
    ).ok
