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


def test_simple_lines_read_without_yaml_as_yaml_reads_them() -> None:
    """The short way for ``key: value`` lines gives what PyYAML gives, and leaves to PyYAML
    every value YAML reads as anything but a plain string or a decimal integer."""
    import yaml

    from sidecar.core import frontmatter

    values = [
        "Careers", "0.85", "'0.85'", '"0.100"', "1636510026672", "0", "007", "0x1F", "1_000",
        "yes", "No", "ON", "off", "true", "null", "Null", "~", "y", "n", "a", "1", "1e3",
        "1.5e3", "2024-01-02", "2024-01-02 10:00:00", "12:30", "190:20:30", ".inf", "nan",
        "'it''s'", "'a # b'", "a # b", "a #b", "a: b", "a:b", "'https://x.org/a.png'",
        "https://x.org/a", "\"tab\\there\"", "\"\"", "''", "trailing ", "a  b", "-1", "+1",
        "x/y.z", "<<", "=", "Hello world.", "'  padded  '", "'a\x01b'", '"a\x7fb"',
        "'a\x85b'", '"a\u2028b"', "'a\u2029b'", '"\ufeffa"', "'a\ufffeb'", "'\xa0'", "'é'",
        "'a\tb'", '"a\tb"',
    ]  # fmt: skip
    keys = ["title", "nav_order", "nav-exclude", "yes", "on", "null", "_", "k" * 150]
    fast = 0
    for key in keys:
        for value in values:
            raw = f"id: x\n{key}: {value}\n"
            mine = frontmatter._simple_mapping(raw)
            try:
                theirs = yaml.load(raw, Loader=frontmatter._Loader)
            except yaml.YAMLError:
                assert mine is None, raw
                continue
            if mine is not None:
                fast += 1
                assert mine == theirs and list(mine) == list(theirs), raw
                assert all(type(mine[k]) is type(theirs[k]) for k in mine), raw
    assert fast > 50  # the short way is taken
    assert frontmatter._simple_mapping("a: 1\na: 2\n") is None  # a repeated key: PyYAML
    assert frontmatter._simple_mapping("a: 1\n\nb: 2\n") is None
    assert frontmatter._simple_mapping("a: b\n  c\n") is None  # a value going on
    many = "".join(f"k{i}: v\n" for i in range(frontmatter.MAX_NODES))
    assert frontmatter._simple_mapping(many) is None  # PyYAML's path says it is too big
    assert fm(f"---\n{many}---\n").error == "frontmatter has more than 20000 values"
    assert fm("---\ntitle: T\nupdated: 1636510026672\n---\n").data == {
        "title": "T", "updated": 1636510026672}  # fmt: skip
