"""Learning from history: recorded decisions and real past sessions decided again under another
policy (``replay``: :mod:`.memory`, :mod:`.transcripts`, both reading :mod:`.records`), and a
profile's thresholds proposed from them and written in place (``calibrate``: :mod:`.calibrate`,
:mod:`.thresholds`); :mod:`.render` holds the text reports (the JSON ones are the results' own).
"""
