"""The spec's agent conversations (Ragas docs), as message lists."""

from __future__ import annotations

from assay.schema.messages import AIMessage, HumanMessage, ToolCall, ToolMessage

RELATIVITY_AND_CAKE = [
    HumanMessage(content="Can you provide me with details about Einstein's theory of relativity?"),
    AIMessage(
        content="Sure, let me retrieve the relevant information for you.",
        tool_calls=[
            ToolCall(name="document_search", args={"query": "Einstein's theory of relativity"})
        ],
    ),
    ToolMessage(
        content="Found relevant documents: 1. Relativity: The Special and the General Theory, "
        "2. General Theory of Relativity by A. Einstein."
    ),
    AIMessage(
        content="I found some documents on Einstein's theory of relativity. Which one would you like to "
        "know more about: 'Relativity: The Special and the General Theory' or 'General Theory of "
        "Relativity by A. Einstein'?"
    ),
    HumanMessage(content="Tell me about the 'General Theory of Relativity'."),
    AIMessage(
        content="Got it! Let me fetch more details from 'General Theory of Relativity by A. Einstein'.",
        tool_calls=[
            ToolCall(
                name="document_retrieve",
                args={"document": "General Theory of Relativity by A. Einstein"},
            )
        ],
    ),
    ToolMessage(
        content="The document discusses how gravity affects the fabric of spacetime, describing the "
        "relationship between mass and spacetime curvature."
    ),
    AIMessage(
        content="The 'General Theory of Relativity' explains how gravity affects the fabric of spacetime and "
        "the relationship between mass and spacetime curvature. Would you like more details or a "
        "specific explanation?"
    ),
    HumanMessage(
        content="No, that's perfect. By the way, do you know any good recipes for a chocolate cake?"
    ),
    AIMessage(
        content="Sure! Let me find a simple and delicious recipe for a chocolate cake.",
        tool_calls=[ToolCall(name="recipe_search", args={"query": "chocolate cake recipe"})],
    ),
    ToolMessage(
        content="Here's a popular recipe for a chocolate cake: Ingredients include flour, sugar, cocoa "
        "powder, eggs, milk, and butter. Instructions: Mix dry ingredients, add wet ingredients, "
        "and bake at 350°F for 30-35 minutes."
    ),
    AIMessage(
        content="I found a great recipe for chocolate cake! Would you like the full details, or is that "
        "summary enough?"
    ),
]

GOLDEN_DRAGON = [
    HumanMessage(content="Hey, book a table at the nearest best Chinese restaurant for 8:00pm"),
    AIMessage(
        content="Sure, let me find the best options for you.",
        tool_calls=[
            ToolCall(name="restaurant_search", args={"cuisine": "Chinese", "time": "8:00pm"})
        ],
    ),
    ToolMessage(content="Found a few options: 1. Golden Dragon, 2. Jade Palace"),
    AIMessage(
        content="I found some great options: Golden Dragon and Jade Palace. Which one would you prefer?"
    ),
    HumanMessage(content="Let's go with Golden Dragon."),
    AIMessage(
        content="Great choice! I'll book a table for 8:00pm at Golden Dragon.",
        tool_calls=[
            ToolCall(name="restaurant_book", args={"name": "Golden Dragon", "time": "8:00pm"})
        ],
    ),
    ToolMessage(content="Table booked at Golden Dragon for 8:00pm."),
    AIMessage(content="Your table at Golden Dragon is booked for 8:00pm. Enjoy your meal!"),
    HumanMessage(content="thanks"),
]
GOLDEN_DRAGON_REFERENCE = "Table booked at one of the chinese restaurants at 8 pm"
