# rules: 
# modes: distributed=main.py
# path: loop.py
def fit(model, train_loader, epochs):
    for epoch in range(epochs):
        train_loader.sampler.set_epoch(epoch)
        for batch in train_loader:
            model(batch)
