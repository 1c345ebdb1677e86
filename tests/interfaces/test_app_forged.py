"""What a browser sends is checked, whatever it sends: a forged value of any of the page's
inputs leaves the session alive, and a forged number is named in the page; the copy box makes
no folder from a name that is no folder's, nor from a forged "copy" on a ledger of one's own;
a name made to resolve to the app's address (DNS rebinding) gets 403 in a real browser.

The forged values are sent as a page's script can send them (``Shiny.setInputValue``), each in
a message of its own, to every input the page has; then the inputs are put back and the plan
must follow a new budget.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_app import CHROMIUM, CHROMIUM_FLAGS, open_page, playwright_api, start_app, stop, wait_text

from procure.interfaces.pages.held import copy_target
from procure.interfaces.pages.parts import Refused
from procure.ledger import default_ledger_dir

#: Values no input of the page takes, as a script can send them (1e400 arrives as null).
FORGED: tuple[object, ...] = ("x", [1], {}, None, True, -1, 1e300, "a\x00b", "x" * 20000)
#: The inputs that are buttons: forging them presses them, which the cases below do on purpose.
BUTTONS = ("save", "copy")

#: Sends each forged value to each input, each in a message of its own (Shiny batches what is
#: set in one turn of the browser's loop), and resolves once all are sent.
FORGE_ALL = """async ([names, values]) => {
  for (const name of names) {
    for (const value of values) {
      Shiny.setInputValue(name, value, {priority: 'event'});
      await new Promise(done => setTimeout(done, 0));
    }
  }
}"""


@pytest.fixture(scope="module")
def chromium():
    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium)")
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=[*CHROMIUM_FLAGS,
                              "--host-resolver-rules=MAP rebound.test 127.0.0.1"])  # fmt: skip
        yield b
        b.close()


def _own_ledger(tmp_path: Path) -> Path:
    """A ledger of one's own whose sources are not the default ledger's (its twin renamed)."""
    folder = tmp_path / "mine"
    shutil.copytree(default_ledger_dir(), folder)
    sources = folder / "sources.csv"
    sources.write_text(sources.read_text().replace("\ntwin,", "\ntwin-b,"))
    return folder


def _inputs(page) -> dict[str, object]:
    """The page's inputs and their values, by name (without Shiny's type suffix)."""
    values = page.evaluate("Object.entries(Shiny.shinyapp.$inputValues)")
    return {k.split(":")[0]: v for k, v in values if not k.startswith(".")}


def _alive(page) -> None:
    """The session still answers: the plan follows a new budget, no 'disconnected' overlay."""
    before = page.inner_text("#spent_usd")
    page.evaluate("Shiny.setInputValue('budget', 345678, {priority: 'event'})")
    wait_text(page, "spent_usd", lambda t: t != before and any(c.isdigit() for c in t))
    assert page.evaluate("document.querySelector('#shiny-disconnected-overlay') === null")


def test_forged_values_of_every_input_leave_the_session_alive(chromium, tmp_path):
    # before: budget_slider = 'x', [1] or {} raised in the Plan page and dropped the session;
    # a forged "copy" on a ledger of one's own copied the default ledger and then dropped the
    # session on a source the copy does not have
    ledger = _own_ledger(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    proc, url = start_app(ledger, cwd=tmp_path)
    try:
        page = open_page(chromium, url, tab="Plan")
        inputs = _inputs(page)
        assert {"budget", "budget_slider", "held_0", "max_share_0", "save"} <= set(inputs)
        page.evaluate("Shiny.setInputValue('budget', 'x', {priority: 'event'})")
        assert "budget = 'x' is invalid" in wait_text(page, "budget_message", lambda t: "invalid" in t)
        forged = [name for name in inputs if name not in BUTTONS]
        page.evaluate(FORGE_ALL, [forged, list(FORGED)])
        page.evaluate(f"Shiny.setInputValue('copy_to', {str(empty)!r}); Shiny.setInputValue('copy', 1)")
        page.evaluate(FORGE_ALL, [list(BUTTONS), [1, "x", None]])
        # the last forged value, 20,000 characters, is named by its length, not echoed whole
        said = wait_text(page, "plan_message", lambda t: "characters)" in t)
        assert "(20,002 characters)" in said and len(said) < 300
        for name in forged:  # put every input back as it was
            page.evaluate("([n, v]) => Shiny.setInputValue(n, v, {priority: 'event'})", [name, inputs[name]])
        _alive(page)
        assert not any(empty.iterdir())  # the copy action is the shipped ledger's only
        assert "twin-b" in (ledger / "sources.csv").read_text()
        page.context.close()
    finally:
        stop(proc)


def test_a_forged_folder_name_in_the_copy_box_is_refused_in_the_page(chromium, tmp_path):
    # before: a name with a NUL byte failed in the copy's thread and the page said nothing
    proc, url = start_app(cwd=tmp_path)
    try:
        page = open_page(chromium, url, tab="Plan")
        for name in ("a\u0000b", "~no-such-user-of-procure/x"):
            page.evaluate("n => Shiny.setInputValue('copy_to', n)", name)
            page.get_by_role("button", name="Copy the default ledger there").click()
            message = wait_text(page, "save_message", lambda t: "is not a folder this page can copy to" in t)
            assert message.startswith("Not copied")
            page.evaluate("Shiny.setInputValue('copy_to', '')")
            page.get_by_role("button", name="Copy the default ledger there").click()
            wait_text(page, "save_message", lambda t: "give the folder" in t)
        assert list(tmp_path.iterdir()) == []
        _alive(page)
        page.context.close()
    finally:
        stop(proc)


def test_a_rebound_name_gets_403_in_the_browser(chromium):
    # before: a page of rebound.test, a name made to resolve to 127.0.0.1, was served the app
    # and its websocket was accepted
    proc, url = start_app()
    port = int(url.rsplit(":", 1)[1])
    try:
        page = chromium.new_page()
        response = page.goto(f"http://rebound.test:{port}/")
        assert response is not None and response.status == 403
        assert "Host 'rebound.test" in page.inner_text("body")
        opened = page.evaluate(
            "port => new Promise(done => { const ws = new WebSocket(`ws://rebound.test:${port}/websocket/`);"
            " ws.onopen = () => done('open'); ws.onerror = () => done('refused'); })",
            port,
        )
        assert opened == "refused"
        own = chromium.new_page()  # the same browser still reaches the app on its own address
        assert own.goto(url).status == 200
        page.close()
        own.close()
    finally:
        stop(proc)


def test_a_copy_box_name_that_is_no_folders_is_refused(tmp_path, monkeypatch):
    # before: a NUL byte raised ValueError and an unknown ~user RuntimeError, not a refusal
    monkeypatch.chdir(tmp_path)
    for name in ("a\x00b", "~no-such-user-of-procure/x"):
        with pytest.raises(Refused, match="is not a folder this page can copy to"):
            copy_target(name)


def test_a_current_folder_at_the_root_does_not_open_every_folder(tmp_path, monkeypatch):
    # before: an app started in / (a service) made /etc/... from the copy box, as under "."
    monkeypatch.chdir("/")
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(Refused, match="is outside this folder"):
        copy_target("/etc/procure-copy-refused")
    assert copy_target("~/mine") == tmp_path / "mine"
    monkeypatch.setenv("HOME", "/")  # a home at the root opens nothing either
    with pytest.raises(Refused, match="is outside this folder"):
        copy_target("/etc/procure-copy-refused")
