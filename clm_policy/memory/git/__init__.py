"""Git, the one way: the runner every git call goes through (:mod:`.run`), the locked write path
and push (:mod:`.write`) and confinement to the repository (:mod:`.confine`)."""
