"""Migration rules, one module per family. Every module here is imported by ``load_rules()``.

Modules starting with an underscore hold helpers shared by several families.
"""
