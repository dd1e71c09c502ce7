"""oracles"""
