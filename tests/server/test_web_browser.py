"""The review page in a real headless Chromium: sign in, read the queue, edit, reject, browse, 403, CSRF.

The app runs under uvicorn on a free loopback port in a thread, on a temporary MARK_HOME (hashing
embedder; reviews need no model). Chromium and its driver are Debian's (``/usr/bin/chromium``,
``/usr/bin/chromedriver``), given to Selenium by path so Selenium Manager never downloads anything;
``scripts/test.sh`` installs them when it runs as root. Screenshots are kept in
``test-artefacts/screenshots/`` at the repository root.
"""

from __future__ import annotations

import base64
import re
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from memory.audit import EventKind
from memory.config import Settings
from memory.conflicts import Verdict
from memory.embedder import HashingEmbedder
from memory.engine import MemoryEngine, utcnow
from memory.history import Speaker
from memory.ingest import ParsedTurn
from memory.keys import KeyStore, Role
from memory.models import MemoryType, Provenance, Source, Status
from server.app import create_app
from server.web import SESSION_SECONDS, read_session, session_cookie
from tests.conftest import HASHING_CONFIG, NOW

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artefacts" / "screenshots"
INSTALL = "apt-get install -y --no-install-recommends chromium chromium-driver (scripts/test.sh does it as root)"

OLD = "Tropicamide eye drops are used at 0.5% to 1% strength for pupil dilation."
CHATTED = "Tropicamide eye drops are used at 0.02% strength for pupil dilation."
EDITED = "Tropicamide eye drops are used at 0.5% to 1% strength; 0.02% is an atropine strength for myopia."
ATROPINE = "Atropine eye drops keep the pupil dilated for 7 to 14 days."
SCRIPTED = "<script>document.title='pwned'</script> Atropine eye drops keep the pupil dilated for two hours."
REASON = "Atropine dilation lasts 7 to 14 days, not hours."
CHAT = [  # alice's chat session s1, as `mark chat` keeps it in her history
    (Speaker.USER, "What strength are tropicamide eye drops used at?"),
    (Speaker.ASSISTANT, "Tropicamide is used at 0.5% to 1% for dilation."),
    (Speaker.USER, "My pharmacist says it is 0.02% <b>only</b>."),
    (Speaker.ASSISTANT, "Thanks, I will remember that tropicamide is used at 0.02%."),
]

pytestmark = pytest.mark.browser


def _need_browser() -> Any:
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        pytest.skip(f"{', '.join(missing)} missing: {INSTALL}")
    return pytest.importorskip("selenium.webdriver", reason="selenium is in the dev extra: pip install -e '.[dev]'")


class Live:
    """The app under uvicorn on a loopback port, with the engine and keys behind it."""

    def __init__(
        self, engine: MemoryEngine, store: KeyStore, keys: dict[str, str], url: str, ids: dict[str, str]
    ) -> None:
        self.engine, self.store, self.keys, self.url, self.ids = engine, store, keys, url, ids


def _seed(engine: MemoryEngine) -> dict[str, str]:
    """Two SME memories, and two pending shared ones from alice: one from a kept chat, one from a build.

    Written minutes ago by the real clock, as the server reads it (veracity decays with age, and a search
    leaves out memories whose veracity has fallen below the gate).
    """
    now = utcnow() - timedelta(minutes=5)
    old = engine.add(OLD, MemoryType.RESIDUAL, "dr-ana", source=Source.SME, now=now).record
    atropine = engine.add(ATROPINE, MemoryType.RESIDUAL, "dr-ana", source=Source.SME, now=now).record
    turns = [ParsedTurn(session_id="s1", turn=i, speaker=s, text=t, at=now) for i, (s, t) in enumerate(CHAT)]
    engine.episodes.add(engine.episodes.events_of("alice", turns, "chat:s1", now))
    chatted = engine.add(
        CHATTED,
        MemoryType.RESIDUAL,
        "alice",
        provenance=Provenance(conversation_id="chat:alice:s1", turn=2, origin="mbs", situation=CHAT[0][1]),
        note={"gate": "supported: the user said it (turn 2)", "said_by": "alice"},
        verdicts={old.id: Verdict.CONTRADICTS},
        actor="committer",
        now=now + timedelta(minutes=1),
    ).record
    built = Provenance(conversation_id="build-7f3a", origin="mbs", situation="How long do atropine drops last?")
    scripted = engine.add(
        SCRIPTED,
        MemoryType.RESIDUAL,
        "alice",
        provenance=built,
        note={"gate": "supported: the user said it", "said_by": "alice"},
        actor="committer",
        now=now + timedelta(minutes=2),
    ).record
    engine.reject_candidate(
        "Atropine is an antibiotic.", MemoryType.RESIDUAL, "alice", "unsaid", detail={"conversation_id": "build-7f3a"}
    )
    assert (chatted.status, scripted.status) == (Status.PENDING_REVIEW, Status.PENDING_REVIEW)
    return {"old": old.id, "atropine": atropine.id, "chatted": chatted.id, "scripted": scripted.id}


@pytest.fixture
def live(settings: Settings) -> Iterator[Live]:
    _need_browser()
    engine = MemoryEngine.open(settings, embedder=HashingEmbedder(), config=HASHING_CONFIG)
    store = KeyStore(settings.keys_path)
    keys = {u: store.create(u, [r], now=NOW).key for u, r in [("rita", Role.REVIEWER), ("alice", Role.USER)]}
    ids = _seed(engine)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(create_app(settings, engine=engine), log_level="warning", ws="none", access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    try:
        yield Live(engine, store, keys, f"http://127.0.0.1:{sock.getsockname()[1]}", ids)
    finally:
        server.should_exit = True
        thread.join(20)
        sock.close()
        engine.close()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    webdriver = _need_browser()
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,1000",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(tmp_path / "chromium-profile", ignore_errors=True)


def _shot(driver: Any, name: str) -> Path:
    """A full-page PNG of the current page, kept as a test artefact."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
    png = driver.execute_cdp_cmd("Page.captureScreenshot", {"clip": clip, "captureBeyondViewport": True})
    path = SCREENSHOTS / name
    path.write_bytes(base64.b64decode(png["data"]))
    return path


def _css(driver: Any, selector: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, selector)


def _all(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, selector))


def _submit_and_wait(driver: Any, button: Any) -> None:
    """Click a submit button and wait until the next page has replaced this one."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    def replaced(_: Any) -> bool:
        try:
            button.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as exc:  # asked mid-navigation, chromedriver says so in other words
            if "does not belong to the document" in str(exc):
                return True
            raise
        return False

    button.click()
    WebDriverWait(driver, 20).until(replaced)
    WebDriverWait(driver, 20).until(lambda d: d.execute_script("return document.readyState") == "complete")


def _sign_in(driver: Any, live: Live, user: str, start: str) -> None:
    driver.get(live.url + start)
    assert "/review/login" in driver.current_url  # every page needs a session
    _css(driver, "#key").send_keys(live.keys[user])
    _submit_and_wait(driver, _css(driver, "#sign-in"))
    assert _css(driver, "#flash").text == f"signed in as {user}"


def test_a_reviewer_decides_the_queue_in_a_real_browser(live: Live, browser: Any) -> None:
    ids = live.ids
    _sign_in(browser, live, "rita", "/review")
    assert browser.current_url == live.url + "/review"
    session = browser.get_cookie("mark_session")
    assert session["httpOnly"] and session["sameSite"] == "Strict" and live.keys["rita"] not in session["value"]

    # the queue: both candidates, oldest first, with provenance, verdicts and the diff
    chatted, scripted = _all(browser, "article.candidate")
    assert [a.get_attribute("id") for a in (chatted, scripted)] == [f"m-{ids[k]}" for k in ("chatted", "scripted")]
    assert _css(chatted, ".memory-text").text == CHATTED
    assert _css(chatted, ".said-by").text.startswith("alice (source: user")
    assert _css(chatted, ".gate").text == "supported: the user said it (turn 2)"
    assert _css(chatted, ".knowledge").text.startswith("silent")
    assert re.match(r"0\.\d\d \(gate at medium risk: 0\.\d\d\)", _css(chatted, ".veracity").text)
    assert "untrusted source (user)" in _css(chatted, ".reasons").text
    lines = [li.text for li in _all(chatted, "ol.transcript li")]
    assert lines == [
        "alice (user): What strength are tropicamide eye drops used at?",
        "assistant: Tropicamide is used at 0.5% to 1% for dilation.",
        "alice (user): My pharmacist says it is 0.02% <b>only</b>.",  # a user's markup is text
        "assistant: Thanks, I will remember that tropicamide is used at 0.02%.",
    ]
    assert _css(chatted, "ol.transcript li.marked").text.endswith("0.02% <b>only</b>.")  # the turn it came from
    assert _css(chatted, "h3.comparison").text.lower() == "would supersede" and ids["old"][:12] in chatted.text
    assert [d.text for d in _all(chatted, ".diff del")] == ["0.5% to 1%"]
    assert [i.text for i in _all(chatted, ".diff ins")] == ["0.02%"]
    # the built one: no transcript kept, so the question, the gap, and what the truth gate refused
    assert _css(scripted, ".memory-text").text == SCRIPTED  # shown as text, never run
    assert browser.title == "Review queue · mark"
    assert _css(scripted, ".situation").text == "Question: How long do atropine drops last?"
    assert "was not kept" in _css(scripted, ".transcript-note").text
    assert _css(scripted, ".refusals").text == "Atropine is an antibiotic. (unsaid)"
    assert "&lt;script&gt;document.title" in browser.page_source
    # no supersession planned: the closest SME memory of its type, as a diff
    assert _css(scripted, "h3.comparison").text.lower().startswith("closest existing residual memory (similarity 0.")
    assert ids["atropine"][:12] in scripted.text
    assert [d.text for d in _all(scripted, ".diff del")] == ["7 to 14 days."]
    assert [i.text for i in _all(scripted, ".diff ins")] == ["<script>document.title='pwned'</script>", "two hours."]
    queue_before = _shot(browser, "review-queue-before.png")

    # edit the first with a new text, reject the second with a reason
    box = _css(chatted, "form.edit textarea")
    box.clear()
    box.send_keys(EDITED)
    _submit_and_wait(browser, _css(chatted, "form.edit button"))
    assert _css(browser, "#flash").text == f"edited and approved {ids['chatted'][:8]}: {EDITED}"
    scripted = _css(browser, f"#m-{ids['scripted']}")
    _css(scripted, "form.reject input[name=reason]").send_keys(REASON)
    _submit_and_wait(browser, _css(scripted, "form.reject button"))
    assert _css(browser, "#flash").text == f"rejected {ids['scripted'][:8]}: reason: {REASON}"
    assert _css(browser, "#queue-empty").text == "Nothing is waiting for a reviewer."
    queue_after = _shot(browser, "review-queue-after.png")

    # the engine's records changed, audited with the reviewer as actor
    edited, rejected, old = (live.engine.get(ids[k]) for k in ("chatted", "scripted", "old"))
    assert (edited.status, edited.text) == (Status.ACTIVE, EDITED)
    assert (rejected.status, rejected.text) == (Status.ARCHIVED, SCRIPTED)
    assert (old.status, old.superseded_by) == (Status.SUPERSEDED, ids["chatted"])  # the deferred supersession
    last_edit, last_reject = live.engine.history(ids["chatted"])[-1], live.engine.history(ids["scripted"])[-1]
    assert (last_edit.kind, last_edit.detail["before"]) == (EventKind.EDIT, CHATTED)
    assert (last_reject.kind, last_reject.detail["reason"]) == (EventKind.REVIEW, REASON)
    assert all(e.actor.startswith("reviewer:rita (key mk_") for e in (last_edit, last_reject))

    # the memory page: the record and its audited history
    browser.get(f"{live.url}/memories/{ids['chatted']}")
    assert _css(browser, "#memory-text").text == EDITED and _css(browser, "#memory-status").text == "active"
    rows = [[td.text for td in _all(tr, "td")[:3]] for tr in _all(browser, "#history tbody tr")]
    assert [r[0] for r in rows] == ["create", "edit"]
    assert rows[0][2] == "committer" and rows[1][2].startswith("reviewer:rita (key mk_")
    assert "0.02%" in _all(browser, "#history tbody tr")[1].text  # the text before the edit
    memory_page = _shot(browser, "memory-history.png")

    # the browser: filter by status, search
    browser.get(f"{live.url}/memories?status=archived")
    assert [td.text for td in _all(browser, "#memories tbody td:nth-child(2)")] == [SCRIPTED]
    browser.get(f"{live.url}/memories?q=how+long+do+atropine+eye+drops+keep+the+pupil+dilated")
    assert _all(browser, "#memories tbody td:nth-child(2)")[0].text == ATROPINE
    for path in (queue_before, queue_after, memory_page):
        assert path.stat().st_size > 10_000, path


def test_a_plain_user_gets_a_403_page_and_forms_need_their_token(live: Live, browser: Any) -> None:
    _sign_in(browser, live, "alice", "/review")  # sent back to where she started: the queue is not hers
    assert _css(browser, "#error-code").text == "403 Forbidden"
    assert "needs the reviewer role" in _css(browser, "#error-message").text
    _shot(browser, "review-403.png")
    browser.get(live.url + "/memories")
    texts = [td.text for td in _all(browser, "#memories tbody td:nth-child(2)")]
    assert set(texts) == {OLD, ATROPINE, CHATTED, SCRIPTED}  # hers and the shared ones
    browser.get(f"{live.url}/memories/no-such-id")
    assert _css(browser, "#error-code").text == "404 Not found"
    _submit_and_wait(browser, _css(browser, "#sign-out"))
    assert "/review/login" in browser.current_url and _css(browser, "#flash").text == "signed out"
    assert browser.get_cookie("mark_session") is None

    # a decision posted without the session's CSRF token is refused, even with the reviewer's cookie
    _sign_in(browser, live, "rita", "/review")
    cookie = browser.get_cookie("mark_session")["value"]
    url = f"{live.url}/review/{live.ids['chatted']}/decide"
    with httpx.Client(cookies={"mark_session": cookie}) as client:
        forged = client.post(url, data={"action": "approve", "csrf": "forged"})
        anonymous = httpx.post(url, data={"action": "approve"})
    assert forged.status_code == 403 and anonymous.status_code == 303
    assert live.engine.get(live.ids["chatted"]).status is Status.PENDING_REVIEW

    # revoking the key ends the session at once
    live.store.revoke(next(e.id for e in live.store.list() if e.user_id == "rita"), now=NOW)
    browser.get(live.url + "/review")
    assert "/review/login" in browser.current_url


def test_a_session_cookie_expires_and_cannot_be_forged(settings: Settings) -> None:
    store = KeyStore(settings.keys_path)
    key = store.create("rita", [Role.REVIEWER], now=NOW).key
    who = store.identify(key)
    assert who is not None
    cookie = session_cookie(key, who, now=1000.0)
    session = read_session(store, cookie, now=1000.0)
    assert session is not None and session.who == who and len(session.csrf) == 64
    assert read_session(store, cookie, now=1000.0 + SESSION_SECONDS) is None  # expired
    key_id, expires, signature = cookie.split(".")
    assert read_session(store, f"{key_id}.{int(expires) + 3600}.{signature}", now=1000.0) is None  # extended
    assert read_session(store, f"{key_id}.{expires}.{'0' * 64}", now=1000.0) is None  # forged
    assert read_session(store, f"{key_id}.{expires}.é", now=1000.0) is None  # not even ASCII
    assert read_session(store, None, now=1000.0) is None and read_session(store, "junk", now=1000.0) is None
