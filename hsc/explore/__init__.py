"""What the app, the report and the Walkthrough draw from: data shaped for charts of a
large repository (:mod:`~hsc.explore.views`), one file followed through the five
stages (:mod:`~hsc.explore.explain`), two parameter sets compared
(:mod:`~hsc.explore.tuning`), the one-page report and the plotly figures.
"""
