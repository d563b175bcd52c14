"""Command lines answered without click: ``decide`` (:mod:`.decide`) and ``log`` (:mod:`.log`),
parsed by :mod:`.args` from the click commands' own option tables."""
