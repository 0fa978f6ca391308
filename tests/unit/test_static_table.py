"""The plain-HTML table: every text escaped, its heading and footnote in the same element, numbers right-aligned."""

from __future__ import annotations

from ui.elements import static_table as table


def test_heading_footnote_and_cells_are_escaped_and_in_one_element(monkeypatch):
    drawn: list[str] = []
    monkeypatch.setattr(table.html_element, "draw_html", drawn.append)
    rows = [("<b>model</b>", 1234.5, None)]
    table.static_table(["name", "value", "gap"], rows, label='A "table"', footnote="<i>note</i>", heading="<h1>x</h1>")
    [body] = drawn
    assert body.startswith('<h3>&lt;h1&gt;x&lt;/h1&gt;</h3><div class="static-table"')
    assert 'aria-label="A &quot;table&quot;"' in body
    assert '<th scope="row">&lt;b&gt;model&lt;/b&gt;</th>' in body and "<td class=num>1,234.5</td>" in body
    assert "<td>—</td>" in body and body.endswith('<p class="table-footnote">&lt;i&gt;note&lt;/i&gt;</p>')


def test_no_heading_no_heading_element():
    assert table.table_html(["a"], [(1,)], label="t").startswith('<div class="static-table"')


def test_a_table_is_built_once_per_content(monkeypatch):
    drawn: list[str] = []
    monkeypatch.setattr(table.html_element, "draw_html", drawn.append)
    built: list[int] = []
    real = table.table_html
    monkeypatch.setattr(table, "table_html", lambda *args, **kwargs: built.append(1) or real(*args, **kwargs))
    table._kept_html.cache_clear()
    formats = {"a": lambda cell: f"${cell}"}
    for value in (1, 1, 2):
        table.static_table(["a"], [(value,)], label="t", formats=formats)
    assert len(built) == 3 - 1  # the repeated content was drawn from the string already built
    assert drawn[0] == drawn[1] != drawn[2] and "$2" in drawn[2]


def test_the_download_button_holds_the_raw_csv_escaped():
    from html.parser import HTMLParser

    rows = [('Say "hi" <b>', 1234.5, None), ("B & C", 2, 3.25)]
    body = table.table_html(["name", "value", "gap"], rows, label="t", download=('the "odd" table', "odd-table"))
    found: list[dict] = []

    class Buttons(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list) -> None:
            if tag == "button":
                found.append(dict(attrs))

    Buttons().feed(body)
    [button] = found
    assert button["type"] == "button" and button["class"] == "table-download"
    assert button["data-file"] == "odd-table.csv"
    assert button["data-csv"] == table.csv_bytes(["name", "value", "gap"], rows).decode("utf-8")
    assert "1234.5" in button["data-csv"] and "<b>" not in body.split("data-csv=")[1].split(">")[0]
    assert body.endswith("Download the &quot;odd&quot; table (CSV)</button>")
