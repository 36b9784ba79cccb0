"""auto"""
