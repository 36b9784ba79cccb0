# rules: USR001 USR004
# modes: rules=rules.json
import AA

old_name(1)
# output
import AA
import AA.BB

AA.BB.new_name(1)
