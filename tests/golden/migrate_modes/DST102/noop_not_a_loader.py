# rules: 
# modes: distributed=main.py
# path: data.py
loader = make_loader(train_set, shuffle=True)
