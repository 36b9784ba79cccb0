"""``ascendify compare``: where a ported run's numbers leave the original's, with no edit of either.

``compare dump`` runs a program unchanged with a recorder armed in each of its Python processes
(:mod:`ascendify.compare._startup`, :mod:`ascendify.compare._recorder`): statistics of the inputs and
outputs of every ``torch.nn.Module`` call, the loss and the gradient norm per step. ``compare A B``
aligns two dumps and names the first module whose inputs agree and whose output does not
(:mod:`ascendify.compare.judge`). Only the recorder imports torch, and only in the program's processes.
"""
