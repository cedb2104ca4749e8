"""The turn loop: async first, with thin sync wrappers."""
