int vanishing_dependency_value(void) { return 1; }
