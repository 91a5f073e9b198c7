from sidecar.core.frontmatter import load_frontmatter, string_list


def fm(text: str):  # type: ignore[no-untyped-def]
    return load_frontmatter(text.splitlines(keepends=True))


def test_valid_frontmatter_and_body_start() -> None:
    r = fm("---\ntitle: T\ncreated: 2024-01-02\n---\nbody\n")
    assert r.error is None
    assert r.data == {"title": "T", "created": "2024-01-02"}
    assert r.body_start == 4


def test_template_placeholders_are_recorded_not_fatal() -> None:
    r = fm("---\ncreated: {{date}}\n---\nbody\n")
    assert r.data == {}
    assert r.error is not None and r.error.startswith("invalid YAML")
    assert r.body_start == 3


def test_crlf_bom_and_unterminated() -> None:
    assert fm("\ufeff---\r\ntags: [a]\r\n---\r\nx").data == {"tags": ["a"]}
    unterminated = fm("---\ntitle: x\nno end\n")
    assert unterminated.data == {} and unterminated.body_start == 0


def test_non_mapping_and_alias_bomb() -> None:
    assert fm("---\n- a\n- b\n---\n").error == "frontmatter is not a mapping"
    bomb = (
        "---\na: &a [x,x,x,x,x,x,x,x,x,x]\n"
        + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},"
            f"*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)}]\n"
            for i in range(8)
        )
        + "---\n"
    )
    r = fm(bomb)
    assert r.data == {} and r.error is not None and "more than" in r.error


def test_string_lists() -> None:
    assert string_list("a, b c", split_spaces=True) == ("a", "b", "c")
    assert string_list("Alice Martin, Al") == ("Alice Martin", "Al")
    assert string_list(["x", None, " y "]) == ("x", "y")
    assert string_list(None) == ()
