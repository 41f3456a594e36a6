"""Peer methods a practitioner tries first, for leaderboards against the papers' mechanisms (issue 18).

``tukey_em`` (Amin et al. 2023, written from the paper) and ``diffprivlib_lr`` (an adapter around IBM diffprivlib's
``LinearRegression``, optional extra ``peers``).
"""
