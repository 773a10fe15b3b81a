"""Stop-word language identification (TRANS paper): count each language's function words.

Function words are the most frequent words of every language and survive OCR noise because
they are short. Each occurrence of a stop word votes for the languages whose list holds it;
a word in n lists gives each 1/n (``de`` is French, Spanish, Portuguese and Dutch...), so
shared words do not swamp the exclusive ones. The language with the most votes wins;
confidence is its margin over the runner-up, ``1 - second / best``.

The lists are team-written (about 100 frequent function words per language), in the form
``bookdup.text`` produces (casefolded, split at apostrophes: ``l'homme`` gives ``l``).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence

MIN_STOPWORD_HITS = 5  # fewer stop-word occurrences than this is "too little evidence"
UNDETERMINED = "und"  # the language code answered with too little evidence (ISO 639-2)

_STOPWORDS_TEXT = {
    "en": """the of and to a in that is was he for it with as his on be at by i this had not
        are but from or have an they which one you were her all she there would their we him
        been has when who will more no if out so said what up its about into than them can only
        other new some could these two may then do first any my now such like our over me even
        most made after also did many before must through back years where much your way well
        down should because each just those how too very own does shall upon while being here
        again against""",
    "de": """der die und in den von zu das mit sich des auf für ist im dem nicht ein eine als
        auch es an werden aus er hat dass daß sie nach wird bei einer um am sind noch wie einem
        über einen so zum war haben nur oder aber vor zur bis mehr durch man sein wurde sei ich
        du wir ihr ihn ihm ihre seine seiner mir mich dir dich uns euch wenn doch schon nun
        hier denn da wo was wer kein keine sehr dann ganz gegen ohne unter wieder immer jetzt
        diese dieser dieses jener mein meine dein deine selbst""",
    "fr": """le la les de des du un une et est en que qui dans pour pas au aux ce cette ces il
        elle ils elles ne se sur sa son ses par plus avec tout tous mais ou où comme on nous
        vous je me te lui leur leurs y sont était avait été être avoir fait bien sans sous
        dont si aussi même encore alors quand très peu rien entre deux jamais toujours chez
        moi toi mon ma mes ton ta tes notre votre qu c l d n s j ai a été cela ceci celui""",
    "es": """el la los las de del y en que a un una por con no su sus para es lo como más pero
        le les se al sin sobre este esta estos estas ese esa eso todo todos también me mi mis
        yo tu él ella ellos nos os ha había son era fue ser estar está muy ya hay cuando donde
        porque sí bien hasta desde entre así tan tanto otro otra nada algo aquí allí pues
        mucho cual quien qué cómo dijo vez sino ni tiene usted señor""",
    "it": """il lo la i gli le di del della dei delle degli da dal dalla in nel nella con su
        sul per tra fra un una uno e è che non si ma come più anche se io tu lui lei noi voi
        loro mi ti ci vi ne suo sua suoi sue mio mia tuo tua questo questa quello quella sono
        era erano ha hanno aveva essere fu fatto quando dove perché così poi già ancora
        sempre molto tutto tutti tutte ogni altro altra niente qui là allora mentre egli ella
        dell all nell sull quel""",
    "pt": """o a os as de do da dos das e em no na nos nas um uma uns umas por para com não que
        se mais como mas ao aos à às pelo pela pelos pelas seu sua seus suas ele ela eles
        elas eu tu você nós vos lhe lhes me te isso isto aquilo este esta esse essa aquele
        aquela foi era são ser estar está estava tem tinha há já muito muita quando onde
        porque também ainda sempre nunca nada tudo todos todas outro outra assim então depois
        sem sobre entre até mesmo meu minha""",
    "nl": """de het een en van in is dat op te zijn met voor niet aan er die maar om als dan
        ook door bij nog naar uit tot over wel of zo was werd worden wordt hij zij ze wij we
        jij je u ik hem haar hun mij me ons onze uw mijn zijn deze dit die dat daar hier waar
        wat wie geen al alle meer veel zeer nu toen want omdat dus heeft had hebben kan kon
        zal zou moet moest mag wil iets niets niemand altijd nooit weer tegen zonder onder
        tussen""",
    "ru": """и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по
        только ее мне было вот от меня еще нет о из ему теперь когда даже ну вдруг ли если
        уже или ни быть был него до вас нибудь опять уж вам ведь там потом себя ничего ей
        может они тут где есть надо ней для мы тебя их чем была сам чтоб без будто чего раз
        тоже себе под будет ж тогда кто этот того потому этого какой совсем ним здесь этом
        один почти мой тем чтобы нее""",
}


def _normalise(word: str) -> str:
    return unicodedata.normalize("NFKC", word).casefold()


STOPWORDS: dict[str, frozenset[str]] = {
    lang: frozenset(_normalise(w) for w in text.split()) for lang, text in _STOPWORDS_TEXT.items()
}
SUPPORTED_LANGUAGES: tuple[str, ...] = tuple(STOPWORDS)
ALL_STOPWORDS: frozenset[str] = frozenset().union(*STOPWORDS.values())
# For each stop word: the languages whose list holds it and the share of a vote each gets.
# In sorted order, not the set's: that depends on the process's hash seed, and the scores are
# float sums, so a Dask worker (another seed) gave another last bit than a forked pool worker.
_VOTES: dict[str, tuple[tuple[int, ...], float]] = {}
for _w in sorted(ALL_STOPWORDS):
    _langs = tuple(i for i, lang in enumerate(SUPPORTED_LANGUAGES) if _w in STOPWORDS[lang])
    _VOTES[_w] = (_langs, 1.0 / len(_langs))


def detect_language_counts(counts: Mapping[str, int]) -> tuple[str, float]:
    """``detect_language`` from word counts (only stop words are looked up)."""
    scores = [0.0] * len(SUPPORTED_LANGUAGES)
    hits = 0
    for word, (langs, share) in _VOTES.items():
        n = counts.get(word, 0)
        if n:
            hits += n
            for i in langs:
                scores[i] += n * share
    if hits < MIN_STOPWORD_HITS:
        return UNDETERMINED, 0.0
    order = sorted(range(len(scores)), key=scores.__getitem__, reverse=True)
    best, second = scores[order[0]], scores[order[1]]
    return SUPPORTED_LANGUAGES[order[0]], 1.0 - second / best


def detect_language(words: Sequence[str]) -> tuple[str, float]:
    """ISO 639-1 code and confidence in [0, 1]; ``("und", 0.0)`` with too little evidence."""
    return detect_language_counts(Counter(words))
