"""Brown, Dvijotham, Evans, Liu, Smith, Thakurta (ICML 2024): DP-GD vs AdaSSP iso-error experiment (spec 005 §4)."""
