"""migrate/rules"""
