"""Git, the one way: the runner every git call goes through (:mod:`.run`), the locked write path
(:mod:`.write`), push (:mod:`.push`) and confinement to the repository (:mod:`.confine`)."""
