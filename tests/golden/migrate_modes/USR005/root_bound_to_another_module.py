# rules: USR001 USR005
# modes: rules=rules.json
import mylib as AA

old_name(1)
# output
import mylib as AA

AA.BB.new_name(1)
