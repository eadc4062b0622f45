"""What people send besides words: documents, images and what the model can see."""
