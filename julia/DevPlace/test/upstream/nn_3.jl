ADCME.save(sess, "filename.mat")

ADCME.load(sess, "filename.mat")
