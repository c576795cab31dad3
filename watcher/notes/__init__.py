"""The notes pipeline: a release body in, classified items and item-level changes out.

``parse`` splits markdown into items (``blocks`` reads markdown-it's tokens, ``flat`` restores
the structure of notes that lost their line breaks), ``headings`` normalises heading names,
``taxonomy`` holds what the headings and rules mean, ``classify`` decides each item's subsystem
and kind from headings, PR ``labels``, rules and the statistical ``model``, ``analyze`` puts
parse and classify behind one call, and ``diff`` matches two versions' items. Everything here is
pure except ``labels``, which reads PR labels through the GitHub client it is given.
"""
