"""oracles/interp"""
