"""Command lines answered without click, as one quick process straight from
:mod:`clm_policy.cli.entry`: ``decide`` (:mod:`.decide`), ``compact --state`` (:mod:`.compact`)
and ``log`` (:mod:`.log`). Each is the same command as click's, not a second one: its options
are its :data:`OPTIONS` table (parsed by :mod:`.args`), which a test holds equal to the click
command's in names, value checks and defaults, and it calls the click command's library and
output functions. Whatever it does not take on — ``--help``, an option it does not know, a value
click would refuse — it hands back (its ``answer`` returns None), and click runs the command
from the start and reports it in its words."""
