"""Small documents written for these tests (Markdown and reStructuredText, shared names)."""

from __future__ import annotations

KETTLES = """# Caring for the Brass Kettle

The Brass Kettle was made in Leeds by the Hartley Foundry in 1911. It holds two litres of water
and sits on a cast iron stand. Owners in Leeds still polish it with lemon juice and salt.

## Descaling

Limescale builds up inside the Brass Kettle after about forty boils in hard water. Fill it with
equal parts vinegar and water, bring it to the boil, and let it stand for one hour. Rinse it
three times before making tea again.

## The Handle

The handle is wrapped in cane by hand at the Hartley Foundry. A loose wrap can be tightened with
a drop of hide glue; modern epoxy cracks the cane within a year.
"""

FOUNDRY = """Hartley Foundry
===============

The Hartley Foundry opened in Leeds in 1887 and closed in 1964. It cast bells, railings and the
Brass Kettle, which became its best-known product after 1911.

Workers
-------

At its peak the Hartley Foundry employed three hundred workers. Apprentices joined at fourteen and
trained for seven years before they were allowed to pour bronze.

The Archive
-----------

The foundry archive is kept at the Leeds Civic Library. It holds order books from 1890 to 1960 and
drawings of every kettle pattern the Hartley Foundry produced.
"""

GARDEN = """# Watering a Kitchen Garden

Tomatoes need deep watering twice a week rather than a little every day. Water at the base of the
plant in the early morning so the leaves stay dry, which keeps blight away.

## Rain Barrels

A rain barrel of two hundred litres fills after about twelve millimetres of rain on a small shed
roof. Fit a mesh lid to keep mosquitoes from laying eggs in the water.

## Mulch

A layer of straw mulch five centimetres deep halves the water lost from the soil in summer. Keep the
straw a hand's width away from the stems of young plants.
"""

NO_HEADINGS = (
    "Sourdough starter is a mix of flour and water kept alive by wild yeast. Feed it every day with "
    "equal weights of flour and water. A lively starter doubles in size within six hours of feeding. "
    "Keep it in the fridge to slow it down when you bake only once a week."
)

TINY = "The Leeds Civic Library opens at nine on Saturdays."

CHINESE = """# 茶壶的保养

黄铜茶壶由利兹的哈特利铸造厂在一九一一年制造。它可以装两升水，放在铸铁支架上。
每次烧水四十次以后，壶内会积水垢，需要用醋和水各一半煮沸后浸泡一小时。
"""

CORPUS = [KETTLES, FOUNDRY, GARDEN]
