import numpy as np


def test_piper_speaks_a_sentence_with_a_sensible_duration(models):
    audio = models.synthesizer.speak("Thanks for calling. Our office opens at nine.")
    seconds = len(audio) / models.synthesizer.sample_rate
    assert audio.dtype == np.int16 and models.synthesizer.sample_rate == 22050
    assert 1.5 < seconds < 6.0
    assert np.sqrt(np.mean(audio.astype(np.float64) ** 2)) > 1000  # clearly not silence


def test_piper_yields_one_chunk_per_sentence(models):
    chunks = list(models.synthesizer.sentences("First sentence here. Second one follows. And a third."))
    assert len(chunks) == 3 and all(len(c) > 0 for c in chunks)
