"""Wang (UAI 2018), "Revisiting differentially private linear regression": the UCI experiment (spec 005 §2a)."""
