"""What only one paper needs: generators, analyses, figure presets (one sub-package per paper)."""
